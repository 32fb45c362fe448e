package e2e

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
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

// TestUnkeptSessionsEnd: every session the link gives is cut off before
// its create can be answered (the proxy delays 300ms each way and is cut
// as soon as zklock says it connected, which leaves 600ms for the cut to
// come before the create's reply; it is healed when zklock says the
// session was lost). zklock warns for each lost session with the reason
// and exits 69 after the third, naming the smallest safe session timeout.
// Before, it opened new sessions forever.
func TestUnkeptSessionsEnd(t *testing.T) {
	path := lockPath(t)
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	proxy.SetDelay(300 * time.Millisecond)
	c := zklock(t, "run", "-v", "--servers", proxy.Addr(), "--session-timeout", "6s", "--path", path, "--", "echo", "ran")
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	killed := time.AfterFunc(90*time.Second, func() { c.Process.Kill() })
	var said strings.Builder
	connects := 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		said.WriteString(line + "\n")
		switch {
		case strings.HasPrefix(line, "zklock: connected to "):
			connects++
			proxy.Cut()
		case strings.Contains(line, "was lost before it could join the queue"):
			proxy.Heal() // which ends the delay too
			proxy.SetDelay(300 * time.Millisecond)
		}
	}
	err = c.Wait()
	if !killed.Stop() {
		t.Fatalf("still running after 90s, after %d sessions:\n%s", connects, said.String())
	}
	code := zktest.ExitCodeT(t, err)
	t.Logf("exit %d after %d sessions:\n%s", code, connects, said.String())
	if code != 69 || connects != 3 {
		t.Fatalf("exit %d after %d sessions, want 69 after 3", code, connects)
	}
	for _, want := range []string{
		"trying again with a new session (2 of 3)", "trying again with a new session (3 of 3)",
		"zklock: zookeeper unavailable: 3 sessions in a row were lost before they could join the queue",
		"(the servers answer, but too slowly for this session timeout: try --session-timeout ",
	} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("stderr does not say %q", want)
		}
	}
}
