package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestTimeoutShrinksOnRollingRestart: a holder negotiated a long timeout
// through proxies to all three servers; a rolling restart lowers every
// server's maxSessionTimeout, so the server that resumes the session
// grants the lower one, and the leader expires the session that long
// after its last touch. Cut off after the restart, the holder must have
// stopped its whole command (one that ignores SIGTERM) before the
// waiter's command starts: its deadlines follow the timeout granted on
// the reconnect, not the one it had when it took the lock.
//
// The lower timeout is 4s where elections are quick. A loaded machine
// stretches the rolling restart's elections past what 4s rides out, and
// the holder then rightly gives up before the cut: one leader restart is
// timed first, and both timeouts outlast it, as TestLeaderRestarts does.
func TestTimeoutShrinksOnRollingRestart(t *testing.T) {
	ctx, c := ownEnsemble(t, zktest.Options{})
	start := time.Now()
	restartLeader(t, ctx, c)
	low := outlasting(time.Since(start), 4*time.Second)
	high := low * 5 / 2
	t.Logf("a leader restart took %s: the timeout shrinks from %s to %s", time.Since(start).Round(time.Millisecond), high, low)
	proxies, through := proxied(t, c)
	conn := zktest.DialT(t, c.Addrs())
	script := `echo "$ZKLOCK_SESSION_ID" > "$D/session"; trap '' TERM
` + treeScript
	p := startPairScript(t, script,
		[]string{"--servers", through, "--session-timeout", high.String(), "-v"},
		[]string{"--servers", c.ConnectString(), "--session-timeout", high.String()},
		func(path string) int { return queueLen(conn, path) })
	b, err := os.ReadFile(filepath.Join(p.dir, "session"))
	if err != nil {
		t.Fatal(err)
	}
	session, err := zktest.ParseSessionID(string(b))
	if err != nil {
		t.Fatal(err)
	}

	for _, s := range c.Servers() {
		if err := s.SetConfig("maxSessionTimeout", strconv.FormatInt(low.Milliseconds(), 10)); err != nil {
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
	// went down: the session now runs on low. Cut only once the holder has
	// read that from a ConnectResponse (its -v says so last): a server lists the connection with
	// its new timeout (cons) while it still asks its leader to revalidate
	// the session, before the response is sent, and a cut then leaves
	// the holder a timeout it can never learn (see zkconn/timeout.go).
	zktest.Eventually(t, 20*time.Second, "the holder's session to run on "+low.String(), func() bool {
		// A holder that lost its lock in the restarts (a starved
		// ensemble can take longer to elect than its budget allows)
		// never gets there: say so at once, and why.
		if msg := p.holderErr.String(); strings.Contains(msg, "lock lost") {
			t.Fatalf("the holder lost its lock during the rolling restart: %s", msg)
		}
		return lastTimeout(p.holderErr.String()) == low.String() && sessionRunsOn(ctx, c, session, low)
	})
	for _, px := range proxies {
		px.Cut()
	}
	cut := time.Now()
	p.holderLost(t)
	t.Logf("holder stopped %s after the cut", time.Since(cut).Round(time.Millisecond))
	gap := p.waiterNext(t)
	t.Logf("gap between the holder's last sign of life and the waiter's start: %s", gap.Round(time.Millisecond))
}

// sessionRunsOn reports whether a server of c lists a connection of
// session with the timeout given.
func sessionRunsOn(ctx context.Context, c *zktest.Cluster, session int64, timeout time.Duration) bool {
	for _, s := range c.Servers() {
		if sc, ok, err := zktest.ConsSession(ctx, s.Addr(), session); err == nil && ok && sc.Timeout == timeout {
			return true
		}
	}
	return false
}

// lastTimeout is the session timeout a -v stderr names last ("session
// timeout 10s; …", "session timeout now 4s; …"), "" if none.
func lastTimeout(stderr string) string {
	last := ""
	for _, line := range strings.Split(stderr, "\n") {
		_, rest, ok := strings.Cut(line, "zklock: session timeout ")
		if !ok {
			continue
		}
		rest = strings.TrimPrefix(rest, "now ")
		if v, _, ok := strings.Cut(rest, ";"); ok {
			last = v
		}
	}
	return last
}
