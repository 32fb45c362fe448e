package runner

import (
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

func TestLateKill(t *testing.T) {
	lost := &lockexec.TerminatedError{Reason: lockexec.ErrLockLost, Killed: true}
	expiry := time.Now()
	late := lateSeen{alive: expiry.Add(1234 * time.Millisecond), expiry: expiry, timeout: 2 * time.Second}
	for _, tc := range []struct {
		name string
		err  error
		seen lateSeen
		want time.Duration // 0: err comes back unchanged
	}{
		{"a loss killed in time", lost, lateSeen{}, 0},
		{"a loss seen running past the expiry", lost, late, 1234 * time.Millisecond},
		{"a command that ended by itself", &lockexec.ExitError{Code: 1}, late, 0},
		{"a revocation", &lockexec.TerminatedError{Reason: lockexec.ErrLockRevoked}, late, 0},
		{"a command never started", lockexec.ErrLockLost, late, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lateKill(tc.err, tc.seen)
			var o *OverlapError
			switch {
			case tc.want == 0 && got != tc.err:
				t.Errorf("got %v, want the error unchanged", got)
			case tc.want > 0 && !errors.As(got, &o):
				t.Errorf("got %v, want an OverlapError", got)
			case tc.want > 0 && (o.Late != tc.want || o.Timeout != 2*time.Second || !errors.Is(got, lockexec.ErrLockLost)):
				t.Errorf("got %+v (%v), want %s late under 2s, still a loss", o, got, tc.want)
			}
		})
	}
}

// TestProbeLate: the probe proves a late kill only with a process of the
// group seen running after the session's earliest expiry; a group dead
// by then, a session the quorum confirms, or a command not yet started
// is nothing late.
func TestProbeLate(t *testing.T) {
	t.Run("running past the expiry", func(t *testing.T) {
		heard := time.Now().Add(-3 * time.Second)
		src := newFakeContact(zkconn.Contact{QuorumHeard: heard, Timeout: 2 * time.Second})
		looks := make(chan int, 10)
		n := 0
		p := newLateProbe(src, func(pid int) bool {
			n++
			if n <= 3 {
				looks <- pid
			}
			return n <= 3
		})
		p.started(42)
		stop := p.watch()
		for range 3 {
			if pid := <-looks; pid != 42 {
				t.Fatalf("probe looked at group %d, want 42", pid)
			}
		}
		seen := stop()
		if seen.late() < time.Second || seen.timeout != 2*time.Second || !seen.expiry.Equal(heard.Add(2*time.Second)) {
			t.Errorf("seen %+v (late %s), want at least 1s past the expiry of a session heard 3s ago with T = 2s", seen, seen.late())
		}
	})
	t.Run("a look on demand", func(t *testing.T) {
		// The guard's loss makes the probe look before the kill, without
		// its goroutine.
		src := newFakeContact(zkconn.Contact{QuorumHeard: time.Now().Add(-3 * time.Second), Timeout: 2 * time.Second})
		p := newLateProbe(src, func(int) bool { return true })
		p.started(42)
		if _, more := p.look(); !more || p.seen.late() < time.Second {
			t.Errorf("seen %+v, want at least 1s late", p.seen)
		}
	})
	t.Run("dead by the expiry", func(t *testing.T) {
		src := newFakeContact(zkconn.Contact{QuorumHeard: time.Now().Add(-3 * time.Second), Timeout: 2 * time.Second})
		looked := make(chan struct{})
		p := newLateProbe(src, func(int) bool { close(looked); return false })
		p.started(42)
		stop := p.watch()
		<-looked
		if seen := stop(); seen.late() != 0 {
			t.Errorf("seen %+v, want nothing late", seen)
		}
	})
	t.Run("a session confirmed", func(t *testing.T) {
		src := newFakeContact(zkconn.Contact{QuorumHeard: time.Now().Add(time.Hour), Timeout: 2 * time.Second})
		p := newLateProbe(src, func(int) bool { t.Error("looked at the group of a live session"); return true })
		p.started(42)
		stop := p.watch()
		src.set(zkconn.Contact{QuorumHeard: time.Now().Add(2 * time.Hour), Timeout: 2 * time.Second})
		if seen := stop(); seen.late() != 0 {
			t.Errorf("seen %+v, want nothing late", seen)
		}
	})
	t.Run("never started", func(t *testing.T) {
		src := newFakeContact(zkconn.Contact{QuorumHeard: time.Now().Add(-time.Hour), Timeout: 2 * time.Second})
		p := newLateProbe(src, func(int) bool { t.Error("looked at a command never started"); return true })
		if seen := p.watch()(); seen.late() != 0 {
			t.Errorf("seen %+v, want nothing late", seen)
		}
	})
}
