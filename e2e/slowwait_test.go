package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
)

// TestSlowLinkWaitEnds: over a link of 420ms round trip with a session
// timeout of 4s, a run on a free lock either takes it and runs the command
// or, when the link keeps no session long enough to join the queue, says
// so for every session lost and exits 69 after a few: it never opens new
// sessions forever without a word.
func TestSlowLinkWaitEnds(t *testing.T) {
	path := lockPath(t)
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	proxy.SetDelay(210 * time.Millisecond)
	start := time.Now()
	r := runWithin(t, 60*time.Second, zklock(t, "run", "--servers", proxy.Addr(), "--session-timeout", "4s",
		"--path", path, "--", "echo", "ran"))
	t.Logf("exit %d after %s; stderr:\n%s", r.code, time.Since(start).Round(time.Millisecond), r.stderr)
	switch r.code {
	case 0:
		if r.stdout != "ran\n" {
			t.Errorf("exit 0 without running the command: %q", r.stdout)
		}
	case 69:
		for _, want := range []string{
			"was lost before it could join the queue", "trying again with a new session (2 of 3)",
			"3 sessions in a row were lost before they could join the queue", "--session-timeout",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not say %q", want)
			}
		}
	default:
		t.Errorf("exit %d, want 0 (acquired) or 69 (no session kept)", r.code)
	}
}
