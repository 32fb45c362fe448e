package zkconn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// slowDial dials servers with timeout T and counts the connections the
// keepalive drops as silent.
func slowDial(t *testing.T, servers []string, timeout time.Duration, drops *atomic.Int32) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, Options{ConnString: ConnString{Servers: servers}, SessionTimeout: timeout,
		Debugf: func(format string, args ...any) {
			if format == silentFormat {
				drops.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestSlowLinkIsNoRefusal: every connection's handshake is answered, and
// its first request and reply are held back (a segment lost and sent
// again) long past the keepalive's patience (T/10 here), so it closes
// connection after connection before any reply. Those closes are
// zklock's own: the session must not end as refused by the server ("may
// require authentication"), which made zklock exit 77 on an open
// ensemble.
func TestSlowLinkIsNoRefusal(t *testing.T) {
	const timeout = 4 * time.Second
	p := zktest.NewProxyT(t, server(t).Addrs()[0])
	p.SetDelay(50 * time.Millisecond)
	p.HoldBack(2, 600*time.Millisecond)
	var drops atomic.Int32
	c := slowDial(t, []string{p.Addr()}, timeout, &drops)
	c.KeepQuorumHeard() // a holder's session: its syncs are held back too
	select {
	case <-c.Lost():
		if err := c.LostErr(); errors.Is(err, ErrPermission) {
			t.Fatalf("after %d connections dropped as silent, the session ended as refused: %v", drops.Load(), err)
		} else {
			t.Fatalf("session lost: %v", err)
		}
	case <-time.After(2 * timeout):
	}
	t.Logf("connections dropped as silent in %s: %d", 2*timeout, drops.Load())
}

// TestSlowLinkKeepsConnection: on links that are slow but alive (420ms
// round trips with jitter; 300ms with every 20th chunk held back as a
// retransmitted segment would be), T = 4s, the keepalive closes no
// connection and the session stays. Before silence followed the
// measured round trip, it was T/10 from the oldest request: the 420ms
// link lost its session within 6s, every handshake dropped as silent.
func TestSlowLinkKeepsConnection(t *testing.T) {
	const timeout = 4 * time.Second
	for _, c := range []struct {
		name           string
		oneWay, jitter time.Duration
		holdEvery      int
	}{
		{"420ms", 210 * time.Millisecond, 20 * time.Millisecond, 0},
		{"300ms held back", 150 * time.Millisecond, 0, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := zktest.NewProxyT(t, server(t).Addrs()[0])
			p.SetDelay(c.oneWay)
			p.SetJitter(c.jitter)
			p.HoldBack(c.holdEvery, 250*time.Millisecond)
			var drops atomic.Int32
			cl := slowDial(t, []string{p.Addr()}, timeout, &drops)
			select {
			case <-cl.Lost():
				t.Fatalf("session lost after %d drops: %v", drops.Load(), cl.LostErr())
			case <-time.After(2 * timeout):
			}
			if n := drops.Load(); n != 0 {
				t.Errorf("%d connections dropped as silent on a live link (round trip %s)", n, cl.RoundTrip())
			}
			t.Logf("round trip %s, silence bound %s", cl.RoundTrip(), silenceBound(timeout, cl.wire.roundTrip()))
		})
	}
}
