package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
)

// TestTimeoutShrinksOnRollingRestart: a holder negotiated the default
// 10s through proxies to all three servers; a rolling restart sets every
// server's maxSessionTimeout to 4000, so the server that resumes the
// session grants 4s, and the leader expires the session 4s after its last
// touch. Cut off after the restart, the holder must have stopped its whole
// command (one that ignores SIGTERM) before the waiter's command starts:
// its deadlines follow the timeout granted on the reconnect, not the one
// it had when it took the lock.
func TestTimeoutShrinksOnRollingRestart(t *testing.T) {
	ctx, c := ownEnsemble(t, zktest.Options{})
	proxies, through := proxied(t, c)
	conn := zktest.DialT(t, c.Addrs())
	script := `echo "$ZKLOCK_SESSION_ID" > "$D/session"; trap '' TERM
` + treeScript
	p := startPairScript(t, script,
		[]string{"--servers", through, "--session-timeout", "10s", "-v"},
		[]string{"--servers", c.ConnectString(), "--session-timeout", "10s"},
		func(path string) int { return queueLen(conn, path) })
	b, err := os.ReadFile(filepath.Join(p.dir, "session"))
	if err != nil {
		t.Fatal(err)
	}
	session := strings.TrimSpace(string(b))

	for _, s := range c.Servers() {
		if err := s.SetConfig("maxSessionTimeout", "4000"); err != nil {
			t.Fatal(err)
		}
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitServing(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Every server restarted, so the holder has reconnected since its own
	// went down: the session now runs on 4s.
	zktest.Eventually(t, 20*time.Second, "the holder's session to run on 4s", func() bool {
		for _, s := range c.Servers() {
			out, err := zktest.Cons(ctx, s.Addr())
			if err != nil {
				continue
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "sid="+session+",") && strings.Contains(line, ",to=4000,") {
					return true
				}
			}
		}
		return false
	})
	for _, px := range proxies {
		px.Cut()
	}
	cut := time.Now()
	p.holderLost(t)
	t.Logf("holder stopped %s after the cut", time.Since(cut).Round(time.Millisecond))
	gap := p.waiterNext(t)
	t.Logf("gap between the holder's last sign of life and the waiter's start: %s", gap.Round(time.Millisecond))
	if !strings.Contains(p.holderErr.String(), "session timeout now 4s") {
		t.Errorf("-v did not say the session timeout changed to 4s: %s", p.holderErr.String())
	}
}
