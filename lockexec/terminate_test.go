//go:build unix

package lockexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// treeScript starts two background sleeps, one of them under a nested
// shell, and records every pid: the whole tree shares the command's group.
const treeScript = `sleep 100 & a=$!
sh -c 'sleep 100 & echo "$$ $!" > "$D/inner.tmp"; mv "$D/inner.tmp" "$D/inner"; wait' &
b=$!
while [ ! -e "$D/inner" ]; do sleep 0.01; done
mark ready "$$ $a $b $(cat "$D/inner")"
sleep 100
wait`

func TestLostTerminateKillsWholeGroup(t *testing.T) {
	s, dir := shSpec(t, treeScript)
	lost := make(chan error, 1)
	s.Lost = lost
	var w warnings
	s.Warn = w.warn
	done := runAsync(context.Background(), s)
	tree := pids(t, waitMarker(t, dir, "ready"))
	killGroupOnCleanup(t, tree[0])
	if len(tree) != 5 {
		t.Fatalf("want 5 pids, got %v", tree)
	}
	for _, pid := range tree {
		if !zktest.ProcessAlive(pid) {
			t.Fatalf("pid %d not running before the loss", pid)
		}
	}

	lost <- errors.New("session expired")
	r := await(t, done)
	if !errors.Is(r.err, ErrLockLost) {
		t.Fatalf("got %v, want ErrLockLost", r.err)
	}
	var te *TerminatedError
	if !errors.As(r.err, &te) || te.Killed {
		t.Fatalf("got %#v, want a TerminatedError without SIGKILL", r.err)
	}
	var ee *ExitError
	if !errors.As(r.err, &ee) || ee.Signal != syscall.SIGTERM {
		t.Fatalf("command outcome %v, want killed by SIGTERM", ee)
	}
	if !strings.Contains(r.err.Error(), "session expired") {
		t.Errorf("error %q does not carry the loss cause", r.err)
	}
	// Everything died of SIGTERM: Supervise must not sit out the 5s grace.
	if r.elapsed > 2*time.Second {
		t.Errorf("Run took %v", r.elapsed)
	}
	// Supervise returns only once the group is empty: no waiting here.
	assertGone(t, tree, "the lock loss")
	if !w.has("lock lost (session expired)") {
		t.Errorf("warnings %q lack the loss", w.list())
	}
}

// TestGraceThenSIGKILL: a command that ignores SIGTERM gets KillGrace,
// then SIGKILL; a KillGrace of 0 means no grace at all.
func TestGraceThenSIGKILL(t *testing.T) {
	for _, grace := range []time.Duration{500 * time.Millisecond, 0} {
		t.Run(grace.String(), func(t *testing.T) { graceThenSIGKILL(t, grace) })
	}
}

func graceThenSIGKILL(t *testing.T, grace time.Duration) {
	s, dir := shSpec(t, `trap '' TERM
mark ready $$
while :; do sleep 0.01; done`)
	lost := make(chan error)
	s.Lost = lost
	s.KillGrace, s.LostKillGrace = grace, grace
	var w warnings
	s.Warn = w.warn
	done := runAsync(context.Background(), s)
	pid := pids(t, waitMarker(t, dir, "ready"))[0]
	killGroupOnCleanup(t, pid)

	start := time.Now()
	close(lost) // a closed channel counts as a loss with no cause
	r := await(t, done)
	elapsed := time.Since(start)
	if elapsed < grace || elapsed > grace+time.Second {
		t.Errorf("Run returned %v after the loss, want about %v", elapsed, grace)
	}
	var te *TerminatedError
	if !errors.As(r.err, &te) || !te.Killed || te.Cause != nil || !errors.Is(r.err, ErrLockLost) {
		t.Fatalf("got %#v (%v)", r.err, r.err)
	}
	if te.Exit == nil || te.Exit.Signal != syscall.SIGKILL || te.Exit.Code != 137 {
		t.Fatalf("command outcome %v, want SIGKILL", te.Exit)
	}
	if !w.has("SIGKILL") {
		t.Errorf("warnings %q lack the SIGKILL", w.list())
	}
	t.Logf("SIGKILL after %v (grace %v)", elapsed, grace)
}

// certainLoss is a loss cause that allows no grace.
type certainLoss struct{}

func (certainLoss) Error() string    { return "node deleted" }
func (certainLoss) Urgency() Urgency { return AtOnce }

// TestCertainLossKillsAtOnce: a loss whose cause says AtOnce gets SIGKILL
// to the whole group at once, whatever the grace; also when it comes
// during the grace of a revocation, which loses the rest of its grace.
func TestCertainLossKillsAtOnce(t *testing.T) {
	for _, during := range []string{"running", "revocation grace"} {
		t.Run(during, func(t *testing.T) {
			s, dir := shSpec(t, `sh -c 'trap "" TERM; echo $$ > "$D/gc.tmp"; mv "$D/gc.tmp" "$D/gc"; while :; do sleep 0.01; done' &
trap '' TERM
while [ ! -e "$D/gc" ]; do sleep 0.01; done
mark ready $$
wait`)
			lost, revoked := make(chan error, 1), make(chan error, 1)
			s.Lost, s.Revoked = lost, revoked
			s.KillGrace, s.LostKillGrace = time.Minute, time.Minute
			var w warnings
			s.Warn = w.warn
			done := runAsync(context.Background(), s)
			leader := pids(t, waitMarker(t, dir, "ready"))[0]
			killGroupOnCleanup(t, leader)
			gc := pids(t, waitMarker(t, dir, "gc"))[0]
			reason := ErrLockLost
			if during == "revocation grace" {
				revoked <- errors.New("revoked by test")
				zktest.Eventually(t, waitTimeout, "the revocation's SIGTERM", func() bool { return w.has("revoked by test") })
				reason = ErrLockRevoked
			}
			start := time.Now()
			lost <- certainLoss{}
			r := await(t, done)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Run returned %v after a certain loss, want at once", elapsed)
			}
			var te *TerminatedError
			if !errors.As(r.err, &te) || !te.Killed || te.Grace != 0 || !errors.Is(r.err, reason) {
				t.Fatalf("got %#v (%v), want SIGKILL with no grace", r.err, r.err)
			}
			if te.Exit == nil || te.Exit.Signal != syscall.SIGKILL {
				t.Errorf("leader outcome %v, want SIGKILL", te.Exit)
			}
			if zktest.ProcessAlive(gc) {
				t.Errorf("grandchild %d alive after Supervise returned", gc)
			}
			if !w.has("sent SIGKILL at once") {
				t.Errorf("warnings %q lack the SIGKILL", w.list())
			}
		})
	}
}

// TestGraceCoversGrandchildren: the wrapper shell dies on SIGTERM at once,
// but a grandchild that ignores it still gets the grace period, then
// SIGKILL, before Supervise returns.
func TestGraceCoversGrandchildren(t *testing.T) {
	const grace = 500 * time.Millisecond
	s, dir := shSpec(t, `sh -c 'trap "" TERM; echo $$ > "$D/gc.tmp"; mv "$D/gc.tmp" "$D/gc"; while :; do sleep 0.01; done' &
while [ ! -e "$D/gc" ]; do sleep 0.01; done
mark ready $$
wait`)
	lost := make(chan error)
	s.Lost = lost
	s.KillGrace, s.LostKillGrace = grace, grace
	done := runAsync(context.Background(), s)
	leader := pids(t, waitMarker(t, dir, "ready"))[0]
	killGroupOnCleanup(t, leader)
	gc := pids(t, waitMarker(t, dir, "gc"))[0]

	start := time.Now()
	close(lost)
	r := await(t, done)
	elapsed := time.Since(start)
	if elapsed < grace || elapsed > grace+time.Second {
		t.Errorf("Run returned %v after the loss, want about %v", elapsed, grace)
	}
	var te *TerminatedError
	if !errors.As(r.err, &te) || !te.Killed {
		t.Fatalf("got %#v (%v), want SIGKILL after grace", r.err, r.err)
	}
	if te.Exit == nil || te.Exit.Signal != syscall.SIGTERM {
		t.Errorf("leader outcome %v, want SIGTERM", te.Exit)
	}
	zktest.Eventually(t, waitTimeout, "grandchild killed", func() bool { return !zktest.ProcessAlive(gc) })
}

func TestLostIgnoreKeepsRunning(t *testing.T) {
	s, dir := shSpec(t, `mark ready $$
while [ ! -e "$D/go" ]; do sleep 0.01; done
exit 7`)
	lost := make(chan error, 1)
	s.Lost = lost
	s.OnLost = Ignore
	var w warnings
	s.Warn = w.warn
	done := runAsync(context.Background(), s)
	pid := pids(t, waitMarker(t, dir, "ready"))[0]
	killGroupOnCleanup(t, pid)

	lost <- errors.New("connection loss")
	zktest.Eventually(t, waitTimeout, "warning", func() bool { return w.has("lock lost (connection loss)") })
	if !w.has("keeps running") {
		t.Errorf("warnings: %q", w.list())
	}
	if !zktest.ProcessAlive(pid) {
		t.Fatal("command stopped despite policy Ignore")
	}
	select {
	case r := <-done:
		t.Fatalf("Run returned early: %v", r.err)
	default:
	}
	touch(t, filepath.Join(dir, "go"))
	r := await(t, done)
	var ee *ExitError
	if !errors.As(r.err, &ee) || ee.Code != 7 || errors.Is(r.err, ErrLockLost) {
		t.Fatalf("got %#v (%v), want the command's own exit 7", r.err, r.err)
	}
}

func TestMaxRuntime(t *testing.T) {
	const max = 300 * time.Millisecond
	s, dir := shSpec(t, treeScript)
	s.MaxRuntime = max
	var w warnings
	s.Warn = w.warn
	done := runAsync(context.Background(), s)
	tree := pids(t, waitMarker(t, dir, "ready"))
	killGroupOnCleanup(t, tree[0])
	r := await(t, done)
	if !errors.Is(r.err, ErrMaxRuntime) || errors.Is(r.err, ErrLockLost) {
		t.Fatalf("got %v, want ErrMaxRuntime", r.err)
	}
	if r.elapsed < max || r.elapsed > max+2*time.Second {
		t.Errorf("Run took %v with MaxRuntime %v", r.elapsed, max)
	}
	assertGone(t, tree, "MaxRuntime")
	if !w.has("maximum run time") {
		t.Errorf("warnings %q", w.list())
	}
}

func TestContextCancel(t *testing.T) {
	s, dir := shSpec(t, treeScript)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := runAsync(ctx, s)
	tree := pids(t, waitMarker(t, dir, "ready"))
	killGroupOnCleanup(t, tree[0])
	cancel(errors.New("shutting down"))
	r := await(t, done)
	if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "shutting down") {
		t.Fatalf("got %v, want context.Canceled with its cause", r.err)
	}
	var ee *ExitError
	if !errors.As(r.err, &ee) || ee.Signal != syscall.SIGTERM {
		t.Errorf("command outcome %v, want SIGTERM", ee)
	}
	assertGone(t, tree, "cancellation")
}

func TestNotStarted(t *testing.T) {
	t.Run("context already done", func(t *testing.T) {
		s, dir := shSpec(t, "mark ran yes")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Supervise(ctx, s); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Fatal("command ran")
		}
	})
	t.Run("lock already lost", func(t *testing.T) {
		s, dir := shSpec(t, "mark ran yes")
		lost := make(chan error, 1)
		lost <- errors.New("expired")
		s.Lost = lost
		if err := Supervise(context.Background(), s); !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("got %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Fatal("command ran")
		}
	})
}

// TestNoGoroutineLeak runs commands through every way Supervise can end and
// checks the goroutine count settles back.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 3; i++ {
		s, _ := shSpec(t, "exit 3")
		_ = Supervise(context.Background(), s)

		_ = Supervise(context.Background(), Spec{Argv: []string{"zklock-test-no-such-command"}, Stdin: devNull(t)})

		s, dir := shSpec(t, "trap '' TERM; trap 'mark usr1 yes' USR1; mark ready $$; while :; do sleep 0.01; done")
		lost := make(chan error)
		s.Lost, s.LostKillGrace = lost, 50*time.Millisecond
		sigc := make(chan os.Signal)
		s.Signals = sigc
		done := runAsync(context.Background(), s)
		waitMarker(t, dir, "ready")
		sigc <- syscall.SIGUSR1
		waitMarker(t, dir, "usr1")
		close(lost) // SIGTERM is ignored: this ends with SIGKILL
		await(t, done)

		s, dir = shSpec(t, "mark ready $$; sleep 100")
		ctx, cancel := context.WithCancel(context.Background())
		done = runAsync(ctx, s)
		waitMarker(t, dir, "ready")
		cancel()
		await(t, done)
	}
	var after int
	deadline := time.Now().Add(waitTimeout)
	for {
		after = runtime.NumGoroutine()
		if after <= before+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after > before+1 {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("goroutines: %d before, %d after", before, after)
}
