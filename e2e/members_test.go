package e2e

import (
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestSilentMemberKeepsLock: the server a holder is connected to falls
// silent (a partition of that member, a long GC pause: the TCP connection
// stays open) while another address of the connect string stays healthy.
// zklock notices the silence itself, moves the session there and keeps
// the lock: the command is undisturbed and zklock exits 0.
func TestSilentMemberKeepsLock(t *testing.T) {
	a := zktest.NewProxyT(t, server(t).Addrs()[0])
	b := zktest.NewProxyT(t, server(t).Addrs()[0])
	undisturbed := startUndisturbed(t, a.Addr()+","+b.Addr(), "3")
	silent := a
	if b.Conns() > 0 {
		silent = b
	}
	silent.Blackhole()
	undisturbed()
}

// TestWedgedMemberInConnectString: one address accepts TCP and never
// answers (a stopped JVM, a frozen VM). Every run still locks through the
// healthy one, each at most the handshake bound (1s) later than it would.
func TestWedgedMemberInConnectString(t *testing.T) {
	wedged := zktest.NewProxyT(t, server(t).Addrs()[0])
	wedged.Blackhole()
	servers := wedged.Addr() + "," + server(t).Addrs()[0]
	// Each run beside one that names the healthy server alone: what a run
	// costs on this machine now, which a loaded machine stretches. The
	// wedged server may add about a second of silence, stretched alike,
	// never the 10 s connect timeout.
	timed := func(servers string) (time.Duration, []byte, error) {
		start := time.Now()
		c := zklock(t, "--servers", servers, "--connect-timeout", "10s", "run", "--path", lockPath(t), "--", "true")
		out, err := c.CombinedOutput()
		return time.Since(start), out, err
	}
	for i := 0; i < 6; i++ {
		base, out, err := timed(server(t).Addrs()[0])
		if code := zktest.ExitCodeT(t, err); code != 0 {
			t.Fatalf("run %d on the healthy server alone: exit %d: %s", i, code, out)
		}
		took, out, err := timed(servers)
		if code := zktest.ExitCodeT(t, err); code != 0 {
			t.Fatalf("run %d: exit %d after %s: %s", i, code, took, out)
		}
		limit := 2*base + 2*time.Second
		t.Logf("run %d: %s (the healthy server alone: %s; bound %s)", i, took.Round(time.Millisecond), base.Round(time.Millisecond), limit.Round(time.Millisecond))
		if took > limit {
			t.Errorf("run %d took %s, more than %s: a wedged server must cost at most about a second", i, took, limit)
		}
	}
}
