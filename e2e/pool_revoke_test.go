package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestPoolRevokeHead revokes a pool job at the head of the pool's queue
// while it waits for a member: it holds env-b and waits for env-a, which a
// gated job holds for the whole test. It must give up at once (76, command
// not run), give back env-b and leave the queue; before the fix it waited
// until env-a was free. The holder of env-a is undisturbed, and nothing is
// left behind.
func TestPoolRevokeHead(t *testing.T) {
	dir, path := t.TempDir(), lockPath(t)
	conn := rawZK(t)
	holder, holderErr := startGated(t, dir, "h", "run", "--path", path, "--resources", "env-a")
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	waiter, waiterErr := startGated(t, dir, "w", "run", "--path", path, "--resources", "env-a,env-b", "--take", "2")
	queue := path + "/_queue"
	zktest.Eventually(t, 10*time.Second, "the waiter to take env-b and wait at the queue's head", func() bool {
		return queueLen(conn, path+"/env-b") == 1 && queueLen(conn, queue) == 1
	})
	q := sortedChildren(t, queue)
	code, out, errOut := revoke(t, "--path", queue, "--node", q[0])
	if code != 0 {
		t.Fatalf("revoke exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The holder of env-a stays gated: only the revocation can end the
	// waiter's wait.
	wantExit(t, waiter, waiterErr, 76, "revoked pool waiter")
	t.Logf("waiter: %s", waiterErr)
	if fileExists(filepath.Join(dir, "w.started")) {
		t.Errorf("the revoked pool waiter ran its command")
	}
	if n := queueLen(conn, path+"/env-b"); n != 0 {
		t.Errorf("%d contenders left on env-b, want none", n)
	}
	if n := queueLen(conn, queue); n != 0 {
		t.Errorf("%d contenders left in the pool's queue, want none", n)
	}
	if n := queueLen(conn, path+"/env-a"); n != 1 {
		t.Errorf("%d contenders on env-a, want its holder alone", n)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	assertGone(t, conn, path)
}
