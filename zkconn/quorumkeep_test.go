package zkconn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// consT reads the connection of c's session from the server's `cons`.
// The server lists a connection's session only some time after it
// answered the connect (on a loaded machine, a while): until then, wait.
func consT(t *testing.T, addr string, c *Client) zktest.SessionConn {
	t.Helper()
	var s zktest.SessionConn
	zktest.Eventually(t, 10*time.Second, fmt.Sprintf("%s to list session 0x%x", addr, c.SessionID()), func() bool {
		var ok bool
		var err error
		s, ok, err = zktest.ConsSession(t.Context(), addr, c.SessionID())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
	return s
}

// TestSyncsOnlyWhenAsked: a session whose owner has not asked for
// QuorumHeard (a lock's waiter) sends the server nothing but
// go-zookeeper's pings, however long it waits; once the owner asks
// (ConfirmQuorum, as a holder does), the keepalive syncs every T/20.
func TestSyncsOnlyWhenAsked(t *testing.T) {
	const timeout = 2 * time.Second
	addr := server(t).Addrs()[0]
	c := dialT(t, []string{addr}, timeout)
	// The session's own first requests (the keepalive reads the
	// server's mode) are answered once a ping has been answered after
	// them: the server answers a connection's requests in order.
	var base zktest.SessionConn
	var from time.Time
	zktest.Eventually(t, 2*timeout, "a ping answered after the session's first requests", func() bool {
		from = time.Now()
		base = consT(t, addr, c)
		return base.LastOp == "PING"
	})
	// Three pings more: a whole session timeout, 20 syncs' worth.
	var now zktest.SessionConn
	zktest.Eventually(t, 3*timeout, "three more pings", func() bool {
		now = consT(t, addr, c)
		return now.Received >= base.Received+3
	})
	if now.LastXid != base.LastXid {
		t.Errorf("the waiting session sent requests of its own: its last xid went from %d to %d (last %s)",
			base.LastXid, now.LastXid, now.LastOp)
	}
	// go-zookeeper pings every T/3: count the pings due in the time the
	// two reads spanned, which a loaded machine stretches.
	span := time.Since(from)
	if n, due := now.Received-base.Received, int64(span/(timeout/3))+1; n > due {
		t.Errorf("%d packets in %v, while %d pings were due", n, span.Round(time.Millisecond), due)
	}

	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if err := c.ConfirmQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	synced := consT(t, addr, c)
	zktest.Eventually(t, 5*timeout, "the keepalive's syncs", func() bool {
		s := consT(t, addr, c)
		return s.LastXid >= synced.LastXid+3
	})
}

// TestConfirmQuorumAfterWaiting: on an ensemble, where a ping certifies
// nothing, a session that waited without syncs has the QuorumHeard of its
// connect; ConfirmQuorum brings it to within what a sync can certify (the
// latest ping answered T/4 before it), in one round trip.
func TestConfirmQuorumAfterWaiting(t *testing.T) {
	ctx, e := zktest.OwnEnsemble(t, 2*time.Minute, zktest.Options{})
	_, f := followerOf(t, ctx, e)
	follower := f.Addr()
	const timeout = 2 * time.Second
	c := dialT(t, []string{follower}, timeout)
	connected := c.QuorumHeard()
	// Past T/4 and two pings (one every T/3): the second is certifiable.
	zktest.Eventually(t, 3*timeout, "two pings", func() bool {
		return consT(t, follower, c).Received >= 3 && time.Since(connected) > timeout/4+timeout/3
	})
	if !c.QuorumHeard().Equal(connected) {
		t.Fatalf("QuorumHeard moved from the connect (%s later) without syncs", c.QuorumHeard().Sub(connected))
	}
	start := time.Now()
	if err := c.ConfirmQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	age := time.Since(c.QuorumHeard())
	t.Logf("ConfirmQuorum took %s; QuorumHeard %s old (connected %s ago)", took.Round(time.Microsecond),
		age.Round(time.Millisecond), time.Since(connected).Round(time.Millisecond))
	if limit := timeout/4 + timeout/3 + 2*timeout/keepaliveDivisor; age > limit {
		t.Errorf("QuorumHeard is %s old after ConfirmQuorum, want at most %s", age, limit)
	}
	if took > timeout/10 {
		t.Errorf("ConfirmQuorum took %s, more than a round trip on loopback", took)
	}
}

// TestSilentServerFailoverWaiting: a waiting session sends no syncs, and
// its server falling silent is still noticed, from the ping that goes
// unanswered: the session resumes on the other server within a ping
// period (T/3) and the silence limit (T/10), so its watches come back
// long before go-zookeeper's own read timeout (2/3·T) would bring them.
func TestSilentServerFailoverWaiting(t *testing.T) {
	const timeout = 4 * time.Second
	a := zktest.NewProxyT(t, server(t).Addrs()[0])
	b := zktest.NewProxyT(t, server(t).Addrs()[0])
	c := dialT(t, []string{a.Addr(), b.Addr()}, timeout)
	silent, other := a, b
	if c.Server() == b.Addr() {
		silent, other = b, a
	}
	// Past the session's own first requests: from here on only pings go
	// out.
	zktest.Eventually(t, timeout, "a ping answered after the session's first requests", func() bool {
		return consT(t, server(t).Addrs()[0], c).LastOp == "PING"
	})
	silenceAt := time.Now()
	silent.Blackhole()
	zktest.Eventually(t, timeout, "the session to resume on the other server", func() bool {
		return c.Server() == other.Addr() && !c.LastHeard().Before(silenceAt)
	})
	took := time.Since(silenceAt)
	t.Logf("silence to the session resumed elsewhere: %s (T = %s)", took.Round(time.Millisecond), timeout)
	if limit := timeout/3 + timeout/silenceDivisor + handshakeLimit(timeout); took > limit {
		t.Errorf("resuming took %s, want at most a ping period, the silence limit and a handshake: %s", took, limit)
	}
}
