package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestSlowLinkHoldersKeepLock: holders with a session timeout of 4s, on
// links with 300ms and 420ms round trips (with some jitter; at 300ms,
// every 20th chunk held back 250ms, as a segment sent again), keep their
// locks for three session timeouts and their commands end by themselves.
// Before the keepalive's idea of silence followed the measured round
// trip, every reply at 420ms came after its T/10 of patience: each
// connection was closed, handshake included, and all three holders gave
// up (69) after three sessions lost before they could join the queue.
func TestSlowLinkHoldersKeepLock(t *testing.T) {
	for _, oneWay := range []time.Duration{150 * time.Millisecond, 210 * time.Millisecond} {
		t.Run(fmt.Sprintf("%s round trip", 2*oneWay), func(t *testing.T) {
			proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
			proxy.SetDelay(oneWay)
			proxy.SetJitter(20 * time.Millisecond)
			if oneWay == 150*time.Millisecond {
				proxy.HoldBack(20, 250*time.Millisecond)
			}
			const holders = 3
			results := make(chan result, holders)
			for i := range holders {
				c := zklock(t, "run", "--servers", proxy.Addr(), "--session-timeout", "4s",
					"--path", fmt.Sprintf("%s-%d", lockPath(t), i), "--", "sleep", "12")
				go func() { results <- runResult(c, 40*time.Second) }()
			}
			for range holders {
				r := <-results
				if r.code != 0 || strings.Contains(r.stderr, "lost") {
					t.Errorf("holder exit %d, want 0 with its lock kept; stderr:\n%s", r.code, r.stderr)
				}
			}
		})
	}
}

// TestSlowLinkTLSConnect: over TLS, a link with a 500ms round trip takes
// longer than go-zookeeper's one second to connect (TCP, then the TLS
// handshake) and longer than the fixed handshake bound to answer the
// ConnectRequest. Both bounds now stretch for the round trip, and a run
// connects, at the default session timeout and at 4s. --connect-timeout
// is long: the first handshake of a fresh JVM on a loaded host took more
// than the default 5 s, and without the stretched bounds every attempt
// would still fail, however long zklock tried.
func TestSlowLinkTLSConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := zktest.NewPKI(t, zktest.IPOnly)
	addr := "127.0.0.1:" + zktest.StartTLS(ctx, t, p, nil)
	proxy := zktest.NewProxyT(t, addr)
	proxy.SetDelay(250 * time.Millisecond)
	path := lockPath(t)
	for _, timeout := range []string{"10s", "4s"} {
		start := time.Now()
		r := runWithin(t, 40*time.Second, zklock(t, "run", "--servers", proxy.Addr(), "--session-timeout", timeout, "--connect-timeout", "30s",
			"--tls-ca", p.Path("ca.pem"), "--tls-cert", p.Path("client.crt"), "--tls-key", p.Path("client.key"),
			"--path", path, "--", "echo", "ran"))
		t.Logf("T = %s: exit %d after %s", timeout, r.code, time.Since(start).Round(time.Millisecond))
		if r.code != 0 || r.stdout != "ran\n" {
			t.Errorf("T = %s: exit %d, stdout %q, want the command run; stderr:\n%s", timeout, r.code, r.stdout, r.stderr)
		}
	}
}
