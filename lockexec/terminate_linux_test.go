package lockexec

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestStoppedCommandIsTerminated: a command stopped with SIGSTOP still
// handles SIGTERM on loss (Supervise follows it with SIGCONT) instead of only
// dying at SIGKILL.
func TestStoppedCommandIsTerminated(t *testing.T) {
	s, dir := shSpec(t, `trap 'mark termed yes; exit 0' TERM
mark ready $$
while :; do sleep 0.01; done`)
	lost := make(chan error)
	s.Lost = lost
	done := runAsync(context.Background(), s)
	pid := pids(t, waitMarker(t, dir, "ready"))[0]
	killGroupOnCleanup(t, pid)
	// Sent again on every poll: the stop is this test's set-up, not what
	// it proves. The shell itself may never show stopped (groupStopped).
	zktest.Eventually(t, waitTimeout, "command stopped", func() bool {
		if groupStopped(pid) {
			return true
		}
		_ = syscall.Kill(-pid, syscall.SIGSTOP)
		return false
	})
	lostAt := time.Now()
	close(lost)
	r := await(t, done)
	var te *TerminatedError
	if !errors.As(r.err, &te) || te.Killed || te.Exit != nil {
		t.Fatalf("got %#v (%v), want a clean exit on SIGTERM", r.err, r.err)
	}
	// Not killed is the proof; the grace is the bound it implies.
	if took := time.Since(lostAt); took >= s.LostKillGrace {
		t.Errorf("the command took %v after the loss, past the %v grace", took, s.LostKillGrace)
	}
}
