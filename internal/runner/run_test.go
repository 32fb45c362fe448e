package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/lockexec"
)

// These tests check Run's orchestration against the shared server, in
// seconds: taking the lock, the command's environment, the release, a
// busy lock, a wait's timeout, a lost lock, re-entry and --once-per. The
// end-to-end tests (e2e) check the same through the command line.

// run is Run, bounded so that a hang fails the test instead of the run.
func run(t *testing.T, o Options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, o)
}

// holdLock takes path with a client of its own, as another zklock would,
// and releases it when the test ends.
func holdLock(t *testing.T, path string, data []byte) *recipe.Lease {
	t.Helper()
	l, err := recipe.Acquire(shared.Ctx(t, 10*time.Second), shared.Client(t), path, recipe.Request{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release(shared.Ctx(t, 5*time.Second)) })
	return l
}

// children lists path's children on the server.
func children(t *testing.T, path string) []string {
	t.Helper()
	ch, _, err := shared.Raw(t).Children(path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return ch
}

// TestRunHoldsAndReleases: the command runs under the lock with the
// lock's path, node and fencing token in its environment; afterwards the
// node is gone and the lock path, a container, is reaped.
func TestRunHoldsAndReleases(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	o := runOptions(t, "sh", "-c", `printf '%s\n%s\n%s\n' "$ZKLOCK_PATH" "$ZKLOCK_NODE" "$ZKLOCK_FENCING_TOKEN" >"$0"`, out)
	if err := run(t, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(strings.TrimSpace(string(b)), "\n")
	path := o.Paths[0]
	if len(env) != 3 || env[0] != path || !strings.HasPrefix(env[1], path+"/_c_") {
		t.Fatalf("the command saw %q, want the path %s and a node under it", env, path)
	}
	if token, err := strconv.ParseInt(env[2], 10, 64); err != nil || token <= 0 {
		t.Errorf("fencing token %q, want a zxid", env[2])
	}
	shared.AssertGone(t, path)
}

// TestRunPassesExitCode: the command's own exit code comes back as a
// *lockexec.ExitError, and the lock is released all the same.
func TestRunPassesExitCode(t *testing.T) {
	o := runOptions(t, "sh", "-c", "exit 3")
	var exit *lockexec.ExitError
	if err := run(t, o); !errors.As(err, &exit) || exit.Code != 3 {
		t.Fatalf("Run = %v, want exit code 3", err)
	}
	shared.AssertGone(t, o.Paths[0])
}

// TestRunCommandNotFound: a command that does not exist fails before
// zklock connects (127), so this test needs no server.
func TestRunCommandNotFound(t *testing.T) {
	o := Options{Paths: []string{"/p"}, Argv: []string{"/nonexistent/zklock-test-command"}, Wait: waitlimit.Forever}
	var start *lockexec.StartError
	if err := Run(context.Background(), o); !errors.As(err, &start) || start.Code != 127 {
		t.Fatalf("Run = %v, want a StartError with 127", err)
	}
}

// TestTryBusy: with waitlimit.None a held lock is a conflict (75), naming the
// holder; the command does not run and nothing of the try is left.
func TestTryBusy(t *testing.T) {
	o := runOptions(t, "touch", filepath.Join(t.TempDir(), "ran"))
	o.Wait = waitlimit.None
	holder := holdLock(t, o.Paths[0], nil)
	err := run(t, o)
	var conflict *ConflictError
	var busy *recipe.BusyError
	if !errors.As(err, &conflict) || conflict.Code != 75 || !errors.As(err, &busy) || o.Paths[0]+"/"+busy.Holder.Name != holder.Node {
		t.Fatalf("Run = %v, want a conflict naming %s", err, holder.Node)
	}
	if _, err := os.Stat(o.Argv[1]); err == nil {
		t.Error("the command ran")
	}
	if ch := children(t, o.Paths[0]); len(ch) != 1 {
		t.Errorf("after the try the queue is %v, want only the holder", ch)
	}
}

// TestWaitTimeout: a bounded wait ends with a conflict that names who held
// the lock, and leaves the queue as it found it.
func TestWaitTimeout(t *testing.T) {
	o := runOptions(t, "true")
	o.Wait = waitlimit.AtMost(300 * time.Millisecond)
	holdLock(t, o.Paths[0], nil)
	var timeout *WaitTimeoutError
	if err := run(t, o); !errors.As(err, &timeout) || len(timeout.Holders) != 1 || timeout.Waiting != o.Paths[0] {
		t.Fatalf("Run = %v, want a timeout naming the holder", err)
	}
	if ch := children(t, o.Paths[0]); len(ch) != 1 {
		t.Errorf("after the timeout the queue is %v, want only the holder", ch)
	}
}

// TestRunWaitsItsTurn: a run behind a holder queues, and runs its command
// once the holder has released, not before.
func TestRunWaitsItsTurn(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	o := runOptions(t, "touch", ran)
	holder := holdLock(t, o.Paths[0], nil)
	done := make(chan error, 1)
	go func() { done <- run(t, o) }()
	zktest.Eventually(t, 10*time.Second, "the run to queue", func() bool { return len(children(t, o.Paths[0])) == 2 })
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran while the lock was held")
	}
	if err := holder.Release(shared.Ctx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	shared.AssertGone(t, o.Paths[0])
}

// TestLostLockStopsCommand: when the node is deleted while the command
// runs, the guard reports the loss, the command is stopped and Run says
// the lock was lost (exit 76).
func TestLostLockStopsCommand(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	o := runOptions(t, "sh", "-c", `echo $$ >"$0"; exec sleep 60`, pidFile)
	done := make(chan error, 1)
	go func() { done <- run(t, o) }()
	var pid int
	zktest.Eventually(t, 10*time.Second, "the command to start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	ch := children(t, o.Paths[0])
	if len(ch) != 1 {
		t.Fatalf("queue %v, want the one holder", ch)
	}
	if err := shared.Raw(t).Delete(o.Paths[0]+"/"+ch[0], -1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, lockexec.ErrLockLost) {
		t.Fatalf("Run = %v, want the lock lost", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the command (pid %d) still runs after Run returned: %v", pid, err)
	}
}

// TestReenterAncestorsLock: under a lock that an ancestor zklock holds (as
// ZKLOCK_HELD names it), Run takes no lock of its own: the command runs at
// once under the ancestor's node, and the ancestor still holds it after.
func TestReenterAncestorsLock(t *testing.T) {
	out := filepath.Join(t.TempDir(), "node")
	o := runOptions(t, "sh", "-c", `echo "$ZKLOCK_NODE" >"$0"`, out)
	// The ancestor: this test binary's parent, as far as the node says.
	ancestor := owner.New("test", []string{"outer"}, recipe.ModeExclusive)
	ancestor.PID = os.Getppid()
	c := shared.Client(t)
	l, err := recipe.Acquire(shared.Ctx(t, 10*time.Second), c, o.Paths[0], recipe.Request{Data: ancestor.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvHeld, formatHeld([]hold{{Mode: recipe.ModeExclusive, Session: c.SessionID(), PID: ancestor.PID, Node: l.Node}}))
	if err := run(t, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(b)) != l.Node {
		t.Fatalf("the command ran under %q (%v), want the ancestor's node %s", b, err, l.Node)
	}
	if ch := children(t, o.Paths[0]); len(ch) != 1 || o.Paths[0]+"/"+ch[0] != l.Node {
		t.Errorf("after the re-entered run the queue is %v, want the ancestor's node alone", ch)
	}
}

// TestOncePerSkipsWithinWindow: with OncePer, a success is recorded under
// the lock, and the next run within the window does not run its command
// (a conflict, 75), while the record stays.
func TestOncePerSkipsWithinWindow(t *testing.T) {
	dir := t.TempDir()
	first := runOptions(t, "touch", filepath.Join(dir, "first"))
	first.OncePer = time.Hour
	path := first.Paths[0]
	t.Cleanup(func() {
		conn := shared.Raw(t)
		conn.Delete(path+"/"+success.NodeName, -1)
	})
	if err := run(t, first); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := success.Read(shared.Ctx(t, 5*time.Second), shared.Client(t), path); !ok || err != nil {
		t.Fatalf("no success recorded after a successful run: %v, %v", ok, err)
	}
	second := first
	second.Argv = []string{"touch", filepath.Join(dir, "second")}
	var conflict *ConflictError
	var recent *RecentSuccessError
	if err := run(t, second); !errors.As(err, &conflict) || conflict.Code != 75 || !errors.As(err, &recent) {
		t.Fatalf("second run within the window: %v, want a recent success (75)", err)
	}
	if _, err := os.Stat(second.Argv[1]); err == nil {
		t.Error("the second command ran within the window")
	}
}
