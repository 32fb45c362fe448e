package zkconn

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestQuorumHeardFollowsKeepalive: on a healthy server the keepalive's
// syncs keep QuorumHeard within the certification lag of now (T/4 plus
// two keepalive periods), and LastHeard is never older than it.
func TestQuorumHeardFollowsKeepalive(t *testing.T) {
	const timeout = 2 * time.Second
	c := dialT(t, server(t).Addrs(), timeout)
	c.KeepQuorumHeard()
	start := time.Now()
	lag := timeout/4 + 2*timeout/keepaliveDivisor + 100*time.Millisecond
	for time.Since(start) < 2*timeout {
		time.Sleep(timeout / 10)
		if q := c.QuorumHeard(); time.Since(q) > lag {
			t.Fatalf("QuorumHeard is %s old, want at most %s", time.Since(q).Round(time.Millisecond), lag)
		}
	}
}

// TestSilentServerFailover: a holder's server falls silent (a partition or
// a frozen member: the TCP connection stays open). The keepalive notices
// within T/10 and closes the connection; go-zookeeper resumes the same
// session through the other address, well within T/4, and QuorumHeard
// moves again.
//
// On a loaded machine the round trips the client measures grow, and by
// design so do its patience with a silent server and with the handshake
// (roundtrip.go): a slow reply is not silence. The bound is then what the
// client's own estimate adds to T/4, which on an idle machine is nothing.
func TestSilentServerFailover(t *testing.T) {
	const timeout = 4 * time.Second
	a := zktest.NewProxyT(t, server(t).Addrs()[0])
	b := zktest.NewProxyT(t, server(t).Addrs()[0])
	c := dialT(t, []string{a.Addr(), b.Addr()}, timeout)
	c.KeepQuorumHeard() // a holder's session: its syncs notice the silence
	id := c.SessionID()
	silent, other := a, b
	if c.Server() == b.Addr() {
		silent, other = b, a
	}
	before := c.wire.roundTrip()
	silenceAt := time.Now()
	silent.Blackhole()
	zktest.Eventually(t, timeout, "the session to resume on the other server", func() bool {
		return c.Server() == other.Addr() && c.QuorumHeard().After(silenceAt)
	})
	took := time.Since(silenceAt)
	bound := failoverBound(timeout, before, c.wire.roundTrip())
	t.Logf("silence to the session resumed elsewhere: %s (T = %s, bound %s)", took.Round(time.Millisecond), timeout, bound)
	if took > bound {
		t.Errorf("resuming took %s, want at most %s (T/4, or more by the round trips measured)", took, bound)
	}
	if c.SessionID() != id {
		t.Errorf("session changed from 0x%x to 0x%x", id, c.SessionID())
	}
	select {
	case <-c.Lost():
		t.Errorf("session lost: %v", c.LostErr())
	default:
	}
}

// failoverBound is how long a resume on another server may take after
// the silence: T/4, plus what the slower of the round trips measured
// before and after it adds to the keepalive's own bounds (the silence
// bound and the handshake's) over a fast link's. On an idle machine that
// is nothing.
func failoverBound(timeout time.Duration, before, after roundTrip) time.Duration {
	rtt := before
	if after.patience() > rtt.patience() {
		rtt = after
	}
	own := func(r roundTrip) time.Duration {
		return silenceBound(timeout, r) + handshakeBound(handshakeLimit(timeout), r.patience(), 0)
	}
	return timeout/4 + max(own(rtt)-own(roundTrip{}), 0)
}

// TestWedgedServerHandshake: one address of the connect string accepts TCP
// connections and never answers (a stopped JVM, a frozen VM). Every dial
// still gets its session through the healthy one, each at most the
// handshake limit later than it would have, whichever address
// go-zookeeper tries first.
func TestWedgedServerHandshake(t *testing.T) {
	const timeout = 4 * time.Second
	wedged := zktest.NewProxyT(t, server(t).Addrs()[0])
	wedged.Blackhole()
	limit := handshakeLimit(timeout)
	for i := 0; i < 6; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		c, err := Dial(ctx, Options{ConnString: ConnString{Servers: []string{wedged.Addr(), server(t).Addrs()[0]}},
			SessionTimeout: timeout, ConnectTimeout: 5 * time.Second})
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("dial %d: %v after %s", i, err, took)
		}
		c.Close()
		t.Logf("dial %d: %s", i, took.Round(time.Millisecond))
		if took > limit+500*time.Millisecond {
			t.Errorf("dial %d took %s: more than the handshake limit %s for the wedged server", i, took, limit)
		}
	}
}

// TestKeepaliveCost measures what one idle holder's session costs the
// server: the keepalive's syncs (20 per T) and go-zookeeper's pings (3 per
// T), read from the server's own packet counter.
func TestKeepaliveCost(t *testing.T) {
	const timeout = 2 * time.Second
	ctx := t.Context()
	dialT(t, server(t).Addrs(), timeout).KeepQuorumHeard()
	time.Sleep(timeout / 2) // past the connect and the first requests
	before, err := zktest.Mntr(ctx, server(t).Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	const periods = 2
	time.Sleep(periods * timeout)
	after, err := zktest.Mntr(ctx, server(t).Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	n := atoiT(t, after["zk_packets_received"]) - atoiT(t, before["zk_packets_received"])
	// Each mntr is one packet too.
	perT := float64(n-1) / periods
	t.Logf("requests per session per T: %.1f", perT)
	if perT > 25 {
		t.Errorf("%.1f requests per T, want at most 23 (20 syncs, 3 pings) and some slack", perT)
	}
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// TestLostWhenDownLongerThanTimeout: when no server carries the session
// for longer than its timeout (here every reconnect is refused), the
// session is lost, even though go-zookeeper never hears that it expired:
// nobody waiting for it to come back waits forever.
func TestLostWhenDownLongerThanTimeout(t *testing.T) {
	const timeout = time.Second
	p := zktest.NewProxyT(t, server(t).Addrs()[0])
	c := dialT(t, []string{p.Addr()}, timeout)
	cut := time.Now()
	p.Cut()
	zktest.Eventually(t, 5*time.Second, "the connection to drop", func() bool {
		select {
		case <-c.sess.upChan():
			return false
		default:
			return true
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*timeout)
	defer cancel()
	err := c.WaitSession(ctx)
	if !IsSessionLoss(err) {
		t.Fatalf("WaitSession: %v, want the session's loss", err)
	}
	if took := time.Since(cut); took < timeout || took > 3*timeout {
		t.Errorf("lost %s after the cut, want just over the timeout %s", took, timeout)
	}
}
