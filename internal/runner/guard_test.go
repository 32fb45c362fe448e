package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// fakeContact is a session whose Contact the test sets; set pushes the
// change, quiet does not (a change the guard has not been told of yet).
type fakeContact struct {
	mu      sync.Mutex
	ct      zkconn.Contact
	changed chan struct{}
}

func newFakeContact(ct zkconn.Contact) *fakeContact {
	return &fakeContact{ct: ct, changed: make(chan struct{})}
}

func (f *fakeContact) Contact() zkconn.Contact {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ct
}

func (f *fakeContact) ContactChanged() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeContact) quiet(ct zkconn.Contact) {
	f.mu.Lock()
	f.ct = ct
	f.mu.Unlock()
}

func (f *fakeContact) set(ct zkconn.Contact) {
	f.mu.Lock()
	f.ct = ct
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// fakeClock's time moves only when the test says; its one timer fires
// when the test fires it.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	fire  chan time.Time
	armed chan time.Duration // each Timer call's duration, for the test
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, armed: make(chan time.Duration, 100)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.fire = ch
	c.mu.Unlock()
	c.armed <- d
	return ch, func() {}
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// ring fires the timer armed last.
func (c *fakeClock) ring() {
	c.mu.Lock()
	ch := c.fire
	now := c.now
	c.mu.Unlock()
	ch <- now
}

// renewals records what the guard sent the watchdog.
type renewals struct {
	ch chan [2]time.Time
}

func (r *renewals) renew(stop, kill time.Time) { r.ch <- [2]time.Time{stop, kill} }

func (r *renewals) next(t *testing.T) [2]time.Time {
	t.Helper()
	select {
	case got := <-r.ch:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("no renewal")
		return [2]time.Time{}
	}
}

// guardRig runs a guard over a fake session and clock.
type guardRig struct {
	src   *fakeContact
	clock *fakeClock
	ren   *renewals
	gone  chan error
	lost  chan error
	logs  chan string
	stop  context.CancelFunc
}

var t0 = time.Unix(1_000_000, 0)

func startGuard(t *testing.T, ct zkconn.Contact, killGrace time.Duration) *guardRig {
	r := &guardRig{
		src: newFakeContact(ct), clock: newFakeClock(t0), ren: &renewals{ch: make(chan [2]time.Time, 100)},
		gone: make(chan error, 1), lost: make(chan error, 1), logs: make(chan string, 100),
	}
	g := &guard{src: r.src, clock: r.clock, killGrace: killGrace, renew: r.ren.renew,
		logf: func(format string, args ...any) { r.logs <- fmt.Sprintf(format, args...) }}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := g.watch(ctx, r.gone); err != nil {
			r.lost <- err
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// armed waits for the guard to arm its timer, and returns for how long.
func (r *guardRig) armed(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-r.clock.armed:
		return d
	case err := <-r.lost:
		t.Fatalf("lost: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the guard never armed its timer")
	}
	return 0
}

func (r *guardRig) noLoss(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.lost:
		t.Fatalf("lost: %v", err)
	default:
	}
}

// TestGuardRenewsOnEveryConfirmation: every move of QuorumHeard renews
// the watchdog with the budget's moments, none skipped, and the timer
// follows.
func TestGuardRenewsOnEveryConfirmation(t *testing.T) {
	const T = 10 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, 5*time.Second)
	b := NewBudget(T, 5*time.Second)
	if got := r.ren.next(t); !got[0].Equal(b.WatchdogStop(t0)) || !got[1].Equal(b.WatchdogKill(t0)) {
		t.Fatalf("first renewal %v, want %v %v", got, b.WatchdogStop(t0), b.WatchdogKill(t0))
	}
	if d := r.armed(t); d != b.Deadline {
		t.Fatalf("timer armed for %s, want %s", d, b.Deadline)
	}
	for i := 1; i <= 50; i++ {
		q := t0.Add(time.Duration(i) * T / 20)
		r.clock.set(q.Add(T / 3))
		r.src.set(zkconn.Contact{QuorumHeard: q, Timeout: T, Granted: T})
		got := r.ren.next(t)
		if !got[0].Equal(b.WatchdogStop(q)) || !got[1].Equal(b.WatchdogKill(q)) {
			t.Fatalf("confirmation %d: renewal %v, want %v %v", i, got, b.WatchdogStop(q), b.WatchdogKill(q))
		}
		if d, want := r.armed(t), b.Stop(q).Sub(q.Add(T/3)); d != want {
			t.Fatalf("confirmation %d: timer armed for %s, want %s", i, d, want)
		}
	}
	r.noLoss(t)
}

// TestGuardLeadsWatchdogWithoutGrace: with no kill grace, zklock's own
// deadline (SIGKILL at once) comes before the watchdog's, which keeps the
// whole margin: the two never act at the same instant, where the watchdog
// could win and the loss be blamed on a zklock that ran on time.
func TestGuardLeadsWatchdogWithoutGrace(t *testing.T) {
	const T = 4 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, 0)
	b := NewBudget(T, 0)
	got := r.ren.next(t)
	if want := t0.Add(T - b.Teardown - b.Margin); !got[0].Equal(want) || !got[1].Equal(want) {
		t.Fatalf("watchdog renewed with %v, want SIGTERM and SIGKILL at %v", got, want)
	}
	if d := r.armed(t); d != b.Deadline || d >= T-b.Teardown-b.Margin {
		t.Fatalf("timer armed for %s, want %s, before the watchdog's %s", d, b.Deadline, T-b.Teardown-b.Margin)
	}
	r.clock.set(b.Stop(t0))
	r.clock.ring()
	var nc *NoContactError
	if err := <-r.lost; !errors.As(err, &nc) || !nc.Kill.Equal(b.Stop(t0)) {
		t.Fatalf("at the deadline: %v, want no contact with the kill at once (%v)", err, b.Stop(t0))
	}
}

// TestGuardTimerRacesConfirmation is the race that once let the watchdog
// fire on an old deadline: the timer for the old deadline fires just as
// QuorumHeard has moved, before the guard hears of the move. The guard
// must look again, move its deadline, and renew the watchdog too.
func TestGuardTimerRacesConfirmation(t *testing.T) {
	const T = 4 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, time.Second)
	b := NewBudget(T, time.Second)
	r.ren.next(t)
	r.armed(t)
	q := t0.Add(T / 2)
	r.src.quiet(zkconn.Contact{QuorumHeard: q, Timeout: T, Granted: T})
	r.clock.set(b.Stop(t0))
	r.clock.ring()
	if got := r.ren.next(t); !got[0].Equal(b.WatchdogStop(q)) || !got[1].Equal(b.WatchdogKill(q)) {
		t.Fatalf("after the race: renewal %v, want %v %v", got, b.WatchdogStop(q), b.WatchdogKill(q))
	}
	if d, want := r.armed(t), b.Stop(q).Sub(b.Stop(t0)); d != want {
		t.Fatalf("timer armed for %s, want %s", d, want)
	}
	r.noLoss(t)
	// Real silence: the timer fires and nothing moved.
	r.clock.set(b.Stop(q))
	r.clock.ring()
	var nc *NoContactError
	if err := <-r.lost; !errors.As(err, &nc) || !nc.Kill.Equal(b.Kill(q)) {
		t.Fatalf("after silence: %v, want no contact with kill at %v", err, b.Kill(q))
	}
}

// TestGuardFollowsShrunkTimeout: a reconnect that granted a smaller
// timeout moves both deadlines earlier at once, says so, and stops the
// command at once when the new deadline has already passed.
func TestGuardFollowsShrunkTimeout(t *testing.T) {
	const T = 10 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, 5*time.Second)
	r.ren.next(t)
	r.armed(t)
	<-r.logs
	// A resume at +1s granted 4s: the deadlines count 4s from it.
	q := t0.Add(time.Second)
	small := NewBudget(4*time.Second, 5*time.Second)
	r.clock.set(q.Add(100 * time.Millisecond))
	r.src.set(zkconn.Contact{QuorumHeard: q, Timeout: 4 * time.Second, Granted: 4 * time.Second})
	if got := r.ren.next(t); !got[0].Equal(small.WatchdogStop(q)) || !got[1].Equal(small.WatchdogKill(q)) {
		t.Fatalf("renewal %v, want %v %v", got, small.WatchdogStop(q), small.WatchdogKill(q))
	}
	if d, want := r.armed(t), small.Stop(q).Sub(q.Add(100*time.Millisecond)); d != want {
		t.Fatalf("timer armed for %s, want %s", d, want)
	}
	if line := <-r.logs; line[:len("session timeout now 4s")] != "session timeout now 4s" {
		t.Errorf("-v said %q", line)
	}
	// Later, after a long silence the client reconnects and is granted
	// 2s; QuorumHeard did not move, so the new deadline has passed.
	r.clock.set(q.Add(2 * time.Second))
	r.src.set(zkconn.Contact{QuorumHeard: q, Timeout: 2 * time.Second, Granted: 2 * time.Second})
	tiny := NewBudget(2*time.Second, 5*time.Second)
	if got := r.ren.next(t); !got[0].Equal(tiny.WatchdogStop(q)) || !got[1].Equal(tiny.WatchdogKill(q)) {
		t.Fatalf("renewal %v, want %v %v", got, tiny.WatchdogStop(q), tiny.WatchdogKill(q))
	}
	var nc *NoContactError
	if err := <-r.lost; !errors.As(err, &nc) || !nc.KillBy().Equal(tiny.Kill(q)) || nc.Timeout != 2*time.Second {
		t.Fatalf("lost %v, want no contact under 2s, kill by %v", err, tiny.Kill(q))
	}
}

// TestGuardGrownTimeoutWaits: a grown timeout that zkconn holds pending
// leaves the deadlines where they were; -v says why.
func TestGuardGrownTimeoutWaits(t *testing.T) {
	const T = 4 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, time.Second)
	r.ren.next(t)
	r.armed(t)
	<-r.logs
	r.src.set(zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: 10 * time.Second, Pending: 10 * time.Second})
	r.armed(t)
	if line := <-r.logs; line != "the server granted 10s on reconnecting; 4s counts until the quorum confirms it" {
		t.Errorf("-v said %q", line)
	}
	select {
	case got := <-r.ren.ch:
		t.Fatalf("renewed %v although the deadlines did not move", got)
	default:
	}
}

// TestGuardSaysOnlyNewTimeouts: -v says "session timeout now" only when
// the timeout in effect changes, not for each reconnect that was granted
// the one the session already had, nor for each confirmation.
func TestGuardSaysOnlyNewTimeouts(t *testing.T) {
	const T = 10 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, time.Second)
	r.ren.next(t)
	r.armed(t)
	if line := <-r.logs; line[:len("session timeout 10s;")] != "session timeout 10s;" {
		t.Fatalf("-v said %q first", line)
	}
	// Each step's lines are all logged before the guard arms its timer.
	steps := []struct {
		ct   zkconn.Contact
		want []string
	}{
		// A reconnect granted what the session has.
		{zkconn.Contact{QuorumHeard: t0.Add(time.Second), Timeout: T, Granted: T}, nil},
		// One granted more than the session was created with.
		{zkconn.Contact{QuorumHeard: t0.Add(2 * time.Second), Timeout: T, Granted: 20 * time.Second},
			[]string{"the server granted 20s on reconnecting; 10s still counts: a newly elected leader goes back to the timeout the session was created with"}},
		// Back on a server that grants the session's own timeout.
		{zkconn.Contact{QuorumHeard: t0.Add(3 * time.Second), Timeout: T, Granted: T}, nil},
		// A real change is still said.
		{zkconn.Contact{QuorumHeard: t0.Add(4 * time.Second), Timeout: 4 * time.Second, Granted: 4 * time.Second},
			[]string{"session timeout now 4s;"}},
	}
	for i, st := range steps {
		r.clock.set(st.ct.QuorumHeard)
		r.src.set(st.ct)
		r.armed(t)
		var got []string
		for len(r.logs) > 0 {
			got = append(got, <-r.logs)
		}
		ok := len(got) == len(st.want)
		for j := 0; ok && j < len(got); j++ {
			ok = strings.HasPrefix(got[j], st.want[j])
		}
		if !ok {
			t.Errorf("step %d (%+v): -v said %q, want lines starting %q", i, st.ct, got, st.want)
		}
	}
}

// TestGuardLeaseLoss: a lease's loss is certain: the command is killed
// at once, with no grace, whatever the budget would leave.
func TestGuardLeaseLoss(t *testing.T) {
	const T = 10 * time.Second
	r := startGuard(t, zkconn.Contact{QuorumHeard: t0, Timeout: T, Granted: T}, 5*time.Second)
	r.ren.next(t)
	r.armed(t)
	r.clock.set(t0.Add(time.Second))
	r.gone <- fmt.Errorf("%w: /x/n", recipe.ErrNodeGone)
	err := <-r.lost
	var urgent interface{ Urgency() lockexec.Urgency }
	if !errors.Is(err, recipe.ErrNodeGone) || !errors.As(err, &urgent) || urgent.Urgency() != lockexec.AtOnce {
		t.Fatalf("lost %v, want the node's deletion, to be acted on at once", err)
	}
}
