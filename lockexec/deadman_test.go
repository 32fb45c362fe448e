package lockexec

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestWatchdogStopsUnrenewedCommand: zklock stops renewing the watchdog's
// deadlines (as it does when it is frozen: here it simply never renews),
// and the watchdog, not zklock, ends the command's whole group at the
// deadline. Supervise then reports the loss of the lock, not the command's own
// failure.
func TestWatchdogStopsUnrenewedCommand(t *testing.T) {
	eachWatchdog(t, func(t *testing.T) {
		unrenewed(t, treeScript, 600*time.Millisecond, time.Second, 600*time.Millisecond)
	})
}

// eachWatchdog runs test with each program that can be the watchdog: the
// companion (zklock-watchdog, built for the test) and the running
// executable, which stands in where the companion is missing.
func eachWatchdog(t *testing.T, test func(t *testing.T)) {
	for _, w := range []struct{ name, program string }{
		{"companion", companionBinary(t)},
		{"self", testExecutable(t)},
	} {
		t.Run(w.name, func(t *testing.T) {
			companion = w.program
			defer func() { companion = "" }()
			test(t)
		})
	}
}

// unrenewed runs script (which marks "ready" with its pids) under a
// watchdog whose deadlines, stop and kill from now, are never renewed. Supervise
// must report a lock loss acted on by the watchdog, no sooner than
// notBefore, and leave none of the pids alive.
func unrenewed(t *testing.T, script string, stop, kill, notBefore time.Duration) {
	t.Helper()
	wd, err := StartWatchdog()
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Retire()
	unrenewedWith(t, wd, script, stop, kill, notBefore)
}

// unrenewedWith is unrenewed with a watchdog the caller started.
func unrenewedWith(t *testing.T, wd *Watchdog, script string, stop, kill, notBefore time.Duration) {
	t.Helper()
	s, dir := shSpec(t, script)
	s.Watchdog = wd
	// The deadlines count from the moment the command is ready: on a
	// loaded machine a shell can take longer than them to start, and the
	// watchdog would then kill it before it marked ready.
	far := time.Now().Add(time.Hour)
	wd.Renew(far, far)
	done := runAsync(context.Background(), s)
	tree := pids(t, waitMarker(t, dir, "ready"))
	killGroupOnCleanup(t, tree[0])
	start := time.Now()
	wd.Renew(start.Add(stop), start.Add(kill))
	r := await(t, done)
	if !errors.Is(r.err, ErrLockLost) || !strings.Contains(r.err.Error(), "watchdog") {
		t.Fatalf("got %v, want a lock loss acted on by the watchdog", r.err)
	}
	if took := time.Since(start); took < notBefore {
		t.Errorf("the command's group was gone after %s, before %s", took, notBefore)
	}
	assertGone(t, tree, "the watchdog")
	// The watchdog writes its report right after its signal, from its own
	// process: the command can be dead and reaped before that write.
	zktest.Eventually(t, waitTimeout, "Fired to say the watchdog acted", wd.Fired)
}

// TestWatchdogKillsWhatIgnoresSIGTERM: past the second deadline the group
// gets SIGKILL, whatever it does with SIGTERM.
func TestWatchdogKillsWhatIgnoresSIGTERM(t *testing.T) {
	eachWatchdog(t, func(t *testing.T) {
		unrenewed(t, `trap '' TERM; sleep 100 & mark ready "$$ $!"; wait; wait`,
			300*time.Millisecond, 700*time.Millisecond, 700*time.Millisecond)
	})
}

// TestWatchdogRenewedKeepsCommand: while zklock renews, the deadlines move
// and the command runs to its own end.
func TestWatchdogRenewedKeepsCommand(t *testing.T) { eachWatchdog(t, renewedKeepsCommand) }

func renewedKeepsCommand(t *testing.T) {
	// A run in which this test itself was starved past the stop deadline
	// between two renewals proves nothing either way: the watchdog was
	// right to act. Such a run is measured and run again.
	const stop = 300 * time.Millisecond
	for attempt := 1; ; attempt++ {
		gap, fired, err := renewedRun(t, stop)
		if gap >= stop && attempt < 5 {
			t.Logf("attempt %d: this test renewed %v apart, past the %v deadline: again", attempt, gap.Round(time.Millisecond), stop)
			continue
		}
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 3 || errors.Is(err, ErrLockLost) {
			t.Fatalf("got %v, want the command's own exit 3 (renewals at most %v apart)", err, gap.Round(time.Millisecond))
		}
		if fired {
			t.Errorf("renewed in time, and Fired says the watchdog acted")
		}
		return
	}
}

// renewedRun runs a command under a watchdog renewed every 100 ms with
// deadlines stop and stop+200ms, and returns the largest gap between two
// renewals, whether the watchdog acted and the outcome.
func renewedRun(t *testing.T, stop time.Duration) (time.Duration, bool, error) {
	s, _ := shSpec(t, `sleep 1.2; exit 3`)
	wd, err := StartWatchdog()
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Retire()
	s.Watchdog = wd
	var last time.Time
	var gap time.Duration
	renew := func() {
		now := time.Now()
		if !last.IsZero() {
			gap = max(gap, now.Sub(last))
		}
		last = now
		wd.Renew(now.Add(stop), now.Add(stop+200*time.Millisecond))
	}
	renew()
	done := runAsync(context.Background(), s)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return gap, wd.Fired(), r.err
		case <-tick.C:
			renew()
		}
	}
}

// TestWatchdogLeavesWhatTheCommandLeft: a command that exits by itself
// leaves what it started in the background alone, and so does the
// watchdog, though zklock renews its deadlines no more while it releases
// the lock (slowly, when the servers are out of reach).
func TestWatchdogLeavesWhatTheCommandLeft(t *testing.T) {
	eachWatchdog(t, func(t *testing.T) {
		s, dir := shSpec(t, `sleep 100 & mark ready "$!"; exit 0`)
		wd, err := StartWatchdog()
		if err != nil {
			t.Fatal(err)
		}
		defer wd.Retire()
		s.Watchdog = wd
		// The deadlines are set once the command has exited: on a loaded
		// machine its shell can take longer than them to get there.
		far := time.Now().Add(time.Hour)
		wd.Renew(far, far)
		if err := Supervise(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		wd.Renew(start.Add(300*time.Millisecond), start.Add(500*time.Millisecond))
		bg := pids(t, waitMarker(t, dir, "ready"))
		t.Cleanup(func() { _ = syscall.Kill(bg[0], syscall.SIGKILL) })
		// Past both deadlines, with time for the watchdog to act.
		time.Sleep(time.Until(start.Add(900 * time.Millisecond)))
		if !zktest.ProcessAlive(bg[0]) {
			t.Fatal("the watchdog killed what the command left in the background")
		}
		if wd.Fired() {
			t.Error("Fired says the watchdog acted on a command that had exited")
		}
	})
}

// TestWatchdogGoneIsReported: a watchdog killed by someone else is
// reported at once (Gone, Err), and a deadline that passes afterwards is
// not blamed on it: it stopped nothing. A watchdog retired as usual is
// never reported gone.
func TestWatchdogGoneIsReported(t *testing.T) {
	eachWatchdog(t, func(t *testing.T) {
		wd, err := StartWatchdog()
		if err != nil {
			t.Fatal(err)
		}
		defer wd.Retire()
		start := time.Now()
		wd.Renew(start.Add(time.Hour), start.Add(time.Hour))
		if err := wd.arm(1 << 22); err != nil { // a group that is not there
			t.Fatal(err)
		}
		if wd.Err() != nil {
			t.Fatalf("Err %v before anything happened", wd.Err())
		}
		if err := syscall.Kill(wd.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wd.Gone():
		case <-time.After(waitTimeout):
			t.Fatalf("Gone not closed %s after the watchdog was killed", waitTimeout)
		}
		var werr *WatchdogError
		if !errors.As(wd.Err(), &werr) || werr.Op != "keep" || werr.Pid != wd.pid || !errors.Is(werr, ErrWatchdogGone) {
			t.Fatalf("Err = %v, want the watchdog's end with its pid %d", wd.Err(), wd.pid)
		}
		wd.Renew(start, start) // past, as if zklock had been frozen
		if wd.stopped(time.Now()) {
			t.Error("a watchdog that is gone is said to have stopped the command")
		}
	})
	t.Run("retired", func(t *testing.T) {
		wd, err := StartWatchdog()
		if err != nil {
			t.Fatal(err)
		}
		if err := wd.arm(1 << 22); err != nil {
			t.Fatal(err)
		}
		wd.disarm()
		wd.Retire()
		select {
		case <-wd.Gone():
			t.Fatalf("a retired watchdog reported gone: %v", wd.Err())
		default:
		}
	})
}
