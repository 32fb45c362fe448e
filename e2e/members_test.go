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
	for i := 0; i < 6; i++ {
		start := time.Now()
		c := zklock(t, "--servers", servers, "--connect-timeout", "10s", "run", "--path", lockPath(t), "--", "true")
		out, err := c.CombinedOutput()
		took := time.Since(start)
		if code := zktest.ExitCodeT(t, err); code != 0 {
			t.Fatalf("run %d: exit %d after %s: %s", i, code, took, out)
		}
		t.Logf("run %d: %s", i, took.Round(time.Millisecond))
		if took > 2500*time.Millisecond {
			t.Errorf("run %d took %s: a wedged server must cost at most about a second", i, took)
		}
	}
}
