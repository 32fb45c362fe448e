// Package doctor checks, one step at a time, what zklock needs from an
// ensemble: each server reachable (and its TLS handshake), a session with
// each and its negotiated timeout, the credentials accepted, and a lock path
// where this client may create, read and delete. Each check is reported
// whether it passed or not, so that one run shows every problem, not the
// first one only.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/zklock/zklock/zkconn"
)

// roundTrips is how many reads time a server's latency; the median is
// reported, so one slow reply (a GC pause) does not decide it.
const roundTrips = 5

// Options describe one run.
type Options struct {
	Conn zkconn.Options
	// Path is the lock path to probe; "" skips that check.
	Path string
	Out  io.Writer
	// SafeTimeout is the smallest session timeout that a run's loss
	// budget can afford at a round trip (over TLS or not), a leader
	// election included: the session's timeout is checked against it on
	// an ensemble.
	SafeTimeout func(rtt time.Duration, tls bool) time.Duration
	// LinkTimeout is the same with no election: the figure for a
	// standalone server, which has none.
	LinkTimeout func(rtt time.Duration, tls bool) time.Duration
	// Symbols prints ✓ and ✗; otherwise plain ASCII "ok" and "FAIL".
	// Color colours them.
	Symbols, Color bool
}

// Check is one line of the checklist.
type Check struct {
	// Subject is what was checked: a server's address, "session", "auth"
	// or the path.
	Subject string
	// Detail says what was found when the check passed.
	Detail string
	// Err is why it failed; nil when it passed. A *Warning passed, with
	// something to fix.
	Err error
}

// Failed is Run's error when any check failed. It unwraps to the first
// failure of the most telling class: an unreachable server or no session
// (zkconn.ErrUnavailable) before a refusal (zkconn.ErrPermission), since
// nothing can be said of permissions where nothing answers.
type Failed struct {
	Failed, Total int
	Err           error
}

func (e *Failed) Error() string {
	return fmt.Sprintf("doctor: %d of %d checks failed; first: %v", e.Failed, e.Total, e.Err)
}

func (e *Failed) Unwrap() error { return e.Err }

// Diagnose runs the checks, prints the checklist to o.Out, and returns a
// *Failed if any check failed.
func Diagnose(ctx context.Context, o Options) error {
	var checks []Check
	list := newChecklist(o)
	add := func(c Check) {
		checks = append(checks, c)
		list.write(c)
	}
	for _, s := range o.Conn.ConnString.Servers {
		serverChecks(ctx, o.Conn, s, add)
	}
	ensembleChecks(ctx, o, add)
	return verdict(checks)
}

// serverChecks checks one server on its own: reach, TLS, a session and the
// round trip of a read.
func serverChecks(ctx context.Context, conn zkconn.Options, server string, add func(Check)) {
	r, err := zkconn.ReachServer(ctx, server, conn.TLS, conn.ConnectTimeout)
	if errors.Is(err, zkconn.ErrUnavailable) {
		add(Check{Subject: server, Err: err})
		return
	}
	add(Check{Subject: server, Detail: "reachable, TCP connect " + ms(r.Connect)})
	if conn.TLS != nil {
		if err != nil {
			add(Check{Subject: server, Err: err})
			return
		}
		add(Check{Subject: server, Detail: fmt.Sprintf("%s handshake %s, certificate verified", r.TLSVersion, ms(r.Handshake))})
	}
	one := conn
	one.ConnString = zkconn.ConnString{Servers: []string{server}, Chroot: conn.ConnString.Chroot}
	one.Warnf = nil
	c, err := zkconn.Dial(ctx, one)
	if err != nil {
		add(Check{Subject: server, Err: fmt.Errorf("no session: %w", err)})
		return
	}
	defer c.Close()
	rtt, reconnects, err := latency(ctx, c)
	if err != nil {
		add(Check{Subject: server, Err: fmt.Errorf("session 0x%x, but a read failed: %w", c.SessionID(), err)})
		return
	}
	detail := fmt.Sprintf("session 0x%x, timeout %s, round trip %s", c.SessionID(), c.NegotiatedTimeout(), ms(rtt))
	add(Check{Subject: server, Detail: detail + rodeOut(reconnects)})
}

// latency is the median time of a few reads of the root (an exists, the
// smallest request that goes through the server's request pipeline). A
// read that lost its connection is timed again once the session is back.
func latency(ctx context.Context, c *zkconn.Client) (time.Duration, int, error) {
	var ts []time.Duration
	reconnects := 0
	for len(ts) < roundTrips {
		start := time.Now()
		_, _, err := c.Exists(ctx, "/")
		if again(ctx, c, err, &reconnects) {
			continue
		}
		if err != nil {
			return 0, reconnects, err
		}
		ts = append(ts, time.Since(start))
	}
	slices.Sort(ts)
	return ts[len(ts)/2], reconnects, nil
}

// rodeOut is what a check that passed adds when it rode out lost
// connections: that something happened to the ensemble meanwhile.
func rodeOut(reconnects int) string {
	switch reconnects {
	case 0:
		return ""
	case 1:
		return "; rode out a lost connection meanwhile (a member down or a leader election), as run does"
	}
	return fmt.Sprintf("; rode out %d lost connections meanwhile (a member down or a leader election), as run does", reconnects)
}

// ensembleChecks takes a session as zklock run would, through the whole
// connect string, and checks the credentials and the lock path with it.
func ensembleChecks(ctx context.Context, o Options, add func(Check)) {
	conn, path := o.Conn, o.Path
	c, err := zkconn.Dial(ctx, conn)
	if err != nil {
		if zkconn.IsPermission(err) || errors.As(err, new(*zkconn.SASLError)) {
			add(Check{Subject: "auth", Err: err})
		} else {
			add(Check{Subject: "session", Err: err})
		}
		return
	}
	defer c.Close()
	add(Check{Subject: "session", Detail: fmt.Sprintf("0x%x through %s, timeout %s (asked for %s)",
		c.SessionID(), c.Server(), c.NegotiatedTimeout(), conn.SessionTimeout)})
	// A server whose mode cannot be read counts as an ensemble's member:
	// the larger figure, with an election, is the safe side.
	standalone, _ := c.Standalone(ctx)
	safe := o.SafeTimeout
	if standalone {
		safe = o.LinkTimeout
	}
	add(timeoutCheck(c, conn, safe, standalone))
	if m, ok := membersCheck(ctx, c, conn); ok {
		add(m)
	}
	add(Check{Subject: "auth", Detail: authDetail(conn)})
	if path == "" {
		return
	}
	res, err := Probe(ctx, c, path)
	if err != nil {
		add(Check{Subject: path, Err: err})
		return
	}
	detail := "created, read and deleted " + res.Node
	if len(res.Made) > 0 {
		detail += fmt.Sprintf(" (and %s, which did not exist)", res.Made[len(res.Made)-1])
	}
	add(Check{Subject: path, Detail: detail + rodeOut(res.Reconnects)})
}

// TimeoutError is the session timeout check's failure: the timeout
// granted is below the smallest safe one for the round trip measured.
type TimeoutError struct {
	Timeout, Asked time.Duration // granted, and asked for
	RoundTrip      time.Duration
	Safe           time.Duration // Options.SafeTimeout's, or LinkTimeout's
	// Standalone says the server runs alone: Safe counts no election.
	Standalone bool
}

func (e *TimeoutError) Error() string {
	if e.Standalone {
		return fmt.Sprintf("%s is shorter than %s, the smallest safe session timeout at a round trip of %s on a standalone server: a slow reply or a reconnect may stop a run's command while ZooKeeper still keeps its lock",
			e.Timeout, e.Safe, ms(e.RoundTrip))
	}
	return fmt.Sprintf("%s is shorter than %s, the smallest safe session timeout at a round trip of %s: a leader election may stop a run's command while ZooKeeper still keeps its lock",
		e.Timeout, e.Safe, ms(e.RoundTrip))
}

// timeoutCheck compares the session's timeout with the smallest safe one
// for its round trip, as run does when it connects.
func timeoutCheck(c *zkconn.Client, conn zkconn.Options, safeTimeout func(rtt time.Duration, tls bool) time.Duration, standalone bool) Check {
	rtt := c.RoundTrip()
	e := &TimeoutError{Timeout: c.Contact().Timeout, Asked: conn.SessionTimeout, RoundTrip: rtt, Safe: safeTimeout(rtt, conn.TLS != nil), Standalone: standalone}
	if e.Timeout < e.Safe {
		return Check{Subject: "timeout", Err: e}
	}
	if standalone {
		return Check{Subject: "timeout", Detail: fmt.Sprintf("%s, at a round trip of %s; the smallest safe: %s (a standalone server: no leader election to ride out)", e.Timeout, ms(rtt), e.Safe)}
	}
	return Check{Subject: "timeout", Detail: fmt.Sprintf("%s, at a round trip of %s; the smallest safe: %s, to ride out a leader election", e.Timeout, ms(rtt), e.Safe)}
}

// authDetail says which credentials the session carries, never a secret.
func authDetail(conn zkconn.Options) string {
	var who []string
	if a := conn.Auth; a != nil {
		switch a.Scheme {
		case zkconn.SchemeX509:
			who = append(who, "x509 (the TLS client certificate's subject)")
		default:
			who = append(who, fmt.Sprintf("%s as %s", a.Scheme, a.User()))
		}
	}
	if conn.SASL != nil {
		who = append(who, fmt.Sprintf("SASL %s as %s", conn.SASL.Mechanism(), conn.SASL.Principal()))
	}
	if len(who) == 0 {
		return "none configured: this client is anyone (world), and the nodes it creates are open to all"
	}
	return fmt.Sprint(joinAnd(who), " accepted")
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

// verdict is nil when every check passed, else a *Failed.
func verdict(checks []Check) error {
	f := &Failed{Total: len(checks)}
	var refused error
	for _, c := range checks {
		if c.Err == nil || errors.As(c.Err, new(*Warning)) {
			continue
		}
		f.Failed++
		switch {
		case zkconn.IsPermission(c.Err) || errors.As(c.Err, new(*zkconn.SASLError)):
			if refused == nil {
				refused = c.Err
			}
		case f.Err == nil:
			f.Err = c.Err
		}
	}
	if f.Failed == 0 {
		return nil
	}
	if f.Err == nil {
		f.Err = refused
	}
	return f
}

// ms prints a duration rounded for a human: 0.42ms, 12ms.
func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}
