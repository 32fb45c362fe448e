package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestSessionLostAroundCreate: a waiter's session is lost three times in
// a row, each time at the same step of joining the queue: the link is cut
// when its create is sent (the server never sees it: no place), or when
// the listing that follows the answered create is sent (a place). Three
// sessions lost without a place end the run with 69; sessions lost with a
// place only say so and join again, and the run takes the lock in turn.
func TestSessionLostAroundCreate(t *testing.T) {
	for name, tc := range map[string]struct {
		op     int32
		code   int
		says   string
		cycles int
	}{
		"at the create":    {zktest.OpCreate, 69, "was lost before it could join the queue", 2},
		"after the create": {zktest.OpGetChildren2, 0, "lost its place in the queue", 3},
	} {
		t.Run(name, func(t *testing.T) {
			path := lockPath(t)
			conn := rawZK(t)
			holder := startHolder(t, path)
			proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
			dir := t.TempDir()
			c := zklock(t, append([]string{"--servers", proxy.Addr(), "--session-timeout", "2s",
				"run", "--path", path, "--"}, guarded(dir, `echo ran`)...)...)
			var stderr syncBuffer
			c.Stderr = &stderr
			trap := proxy.SwallowRequest(tc.op)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Process.Kill() })
			for i := range 3 {
				select {
				case <-trap:
				case <-time.After(20 * time.Second):
					t.Fatalf("cycle %d: the proxy never caught the request; stderr:\n%s", i, stderr.String())
				}
				proxy.Cut()
				// zklock gives a session up once no server has carried it
				// for its timeout; the third session lost without a place
				// ends the run instead (a healed link would let that
				// session resume and wait behind the holder).
				if n := i + 1; n <= tc.cycles {
					zktest.Eventually(t, 20*time.Second, "zklock to give the session up", func() bool {
						return strings.Count(stderr.String(), tc.says) == n
					})
				}
				if n := i + 1; n > tc.cycles {
					break // cut until zklock gives up
				}
				proxy.Heal()
				if i < 2 {
					trap = proxy.SwallowRequest(tc.op)
				}
			}
			if tc.code == 0 {
				zktest.Eventually(t, 20*time.Second, "the waiter to queue again", func() bool { return queueLen(conn, path) == 2 })
				holder.Process.Signal(syscall.SIGTERM)
			}
			// Bounded: a zklock that never gives up fails the test
			// rather than hanging it.
			killed := time.AfterFunc(60*time.Second, func() { c.Process.Kill() })
			code := zktest.ExitCodeT(t, c.Wait())
			if !killed.Stop() {
				t.Fatalf("zklock still ran 60s after the last cut; stderr:\n%s", stderr.String())
			}
			t.Logf("exit %d; stderr:\n%s", code, stderr.String())
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if n := strings.Count(stderr.String(), tc.says); n != tc.cycles {
				t.Errorf("said %q %d times, want %d", tc.says, n, tc.cycles)
			}
		})
	}
}
