package recipe

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// supersedeReq is a superseding request whose data names pid; key nil
// orders by arrival.
func supersedeReq(pid int, key *int64) Request {
	s := &Supersede{Key: key}
	data := fmt.Appendf(nil, `{"zklock":"test","host":"h","pid":%d,"cmd":["x"],"supersede":{}}`, pid)
	if key != nil {
		data = fmt.Appendf(nil, `{"zklock":"test","host":"h","pid":%d,"cmd":["x"],"supersede":{"key":%d}}`, pid, *key)
	}
	return Request{Data: data, Supersede: s}
}

func keyOf(n int64) *int64 { return &n }

// acquired is what one Acquire in a goroutine ended with.
type acquired struct {
	who int
	l   *Lease
	err error
}

// TestSupersedeLeavesOneWaiter: twelve contenders join a held superseding
// queue at once. However their creates and reads interleave, all but one
// leave, superseded; the one left waits herd-free (wchp: it watches the
// holder and its own node, and nobody watches the lock path), takes the
// lock when the holder releases, and nothing is left behind.
func TestSupersedeLeavesOneWaiter(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 90*time.Second)
	holder, err := Acquire(ctx, client(t), path, supersedeReq(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	const contenders = 12
	results := make(chan acquired, contenders)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 1; i <= contenders; i++ {
		c := client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Acquire(ctx, c, path, supersedeReq(i, nil))
			if err != nil {
				// Its watches go with its session, as when a zklock exits.
				c.Close()
			}
			results <- acquired{who: i, l: l, err: err}
		}()
	}
	for range contenders - 1 {
		select {
		case r := <-results:
			var s *SupersededError
			if !errors.As(r.err, &s) {
				t.Fatalf("contender %d: %v, want superseded", r.who, r.err)
			}
			if s.By.Host != "h" || s.By.PID < 1 || s.By.Node == "" {
				t.Errorf("contender %d: superseded by %+v, want a named contender", r.who, s.By)
			}
		case <-ctx.Done():
			t.Fatal("contenders still waiting: superseding left more than one waiter")
		}
	}
	addr := shared.Server(t).Addrs()[0]
	watched := awaitWatches(t, ctx, addr, path, 2)
	conn := raw(t)
	children, _, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	q := Contenders(children)
	if len(q) != 2 {
		t.Fatalf("%d contenders, want the holder and one waiter", len(q))
	}
	others := othersWatching(t, conn, path, q, watched)
	if others[0] != 1 || others[1] != 0 {
		t.Errorf("watched by other sessions: holder %d, waiter %d; want 1 and 0", others[0], others[1])
	}
	if _, ok := watched[path]; ok {
		t.Errorf("the lock path itself is watched: a child watch means a herd")
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-results
	if r.err != nil {
		t.Fatalf("the last waiter: %v", r.err)
	}
	r.l.Release(ctx)
	assertGone(t, path)
}

// TestSupersedeOrderKey: with order keys the highest key survives, not the
// newest arrival; an equal key is a retry, and the newer one stays.
func TestSupersedeOrderKey(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	holder, err := Acquire(ctx, client(t), path, supersedeReq(0, keyOf(1)))
	if err != nil {
		t.Fatal(err)
	}
	start := func(pid int, key int64) chan acquired {
		out := make(chan acquired, 1)
		c := client(t)
		go func() {
			l, err := Acquire(ctx, c, path, supersedeReq(pid, keyOf(key)))
			out <- acquired{who: pid, l: l, err: err}
		}()
		return out
	}
	conn := raw(t)
	waitQueue := func(n int) {
		t.Helper()
		zktest.Eventually(t, 10*time.Second, fmt.Sprintf("%d contenders", n), func() bool {
			ch, _, err := conn.Children(path)
			return err == nil && len(Contenders(ch)) == n
		})
	}
	superseded := func(r acquired, key int64) {
		t.Helper()
		var s *SupersededError
		if !errors.As(r.err, &s) || s.By.Key == nil || *s.By.Key != key {
			t.Fatalf("pid %d: %v, want superseded by key %d", r.who, r.err, key)
		}
	}
	w5 := start(1, 5)
	waitQueue(2)
	// A lower key arriving later leaves at once, named by the key 5.
	superseded(<-start(2, 3), 5)
	// An equal key takes the place: a retry of the same pipeline.
	again := start(3, 5)
	superseded(<-w5, 5)
	w7 := start(4, 7)
	superseded(<-again, 7)
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-w7
	if r.err != nil {
		t.Fatal(r.err)
	}
	r.l.Release(ctx)
	assertGone(t, path)
}

// TestSupersedeMixedRefused: a superseding contender and a plain one do
// not share a path, whichever came first; the one refused backs out.
func TestSupersedeMixedRefused(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	for _, plainFirst := range []bool{true, false} {
		path := testPath(t) + fmt.Sprint(plainFirst)
		first, second := supersedeReq(1, nil), Request{Data: zklockData(0)}
		if plainFirst {
			first, second = second, first
		}
		holder, err := Acquire(ctx, client(t), path, first)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Acquire(ctx, client(t), path, second)
		var kind *KindConflictError
		if !errors.As(err, &kind) || (kind.Found == RecipeSupersede) == plainFirst {
			t.Errorf("plain first %v: %v, want a kind conflict", plainFirst, err)
		}
		holder.Release(ctx)
		assertGone(t, path)
	}
}

// TestSupersedeReleaseRace: the holder releases just as a newcomer joins
// behind the one waiter. Whichever way the race goes, the lock is never
// left idle while someone waits: the waiter takes it (the newcomer then
// waits behind it) or was superseded and the newcomer takes it; never are
// both gone, and never do both hold at once.
func TestSupersedeReleaseRace(t *testing.T) {
	ctx := ctxT(t, 120*time.Second)
	addr := shared.Server(t).Addrs()[0]
	tally := map[string]int{}
	for round := range 15 {
		path := fmt.Sprintf("%s%d", testPath(t), round)
		holder, err := Acquire(ctx, client(t), path, supersedeReq(0, nil))
		if err != nil {
			t.Fatal(err)
		}
		wc, nc := client(t), client(t)
		waiter := make(chan acquired, 1)
		go func() {
			l, err := Acquire(ctx, wc, path, supersedeReq(1, nil))
			waiter <- acquired{who: 1, l: l, err: err}
		}()
		awaitWatches(t, ctx, addr, path, 2)
		newcomer := make(chan acquired, 1)
		go func() {
			l, err := Acquire(ctx, nc, path, supersedeReq(2, nil))
			newcomer <- acquired{who: 2, l: l, err: err}
		}()
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		w := <-waiter
		switch {
		case w.err == nil:
			tally["waiter ran"]++
			select {
			case n := <-newcomer:
				t.Fatalf("round %d: the newcomer ended (%v) while the waiter held", round, n.err)
			default:
			}
			w.l.Release(ctx)
		case errors.Is(w.err, ErrSuperseded):
			tally["superseded"]++
		default:
			t.Fatal(w.err)
		}
		n := <-newcomer
		if n.err != nil {
			t.Fatalf("round %d: newcomer: %v", round, n.err)
		}
		n.l.Release(ctx)
		assertGone(t, path)
	}
	t.Logf("outcomes: %v", tally)
}

// TestSupersedeToldAsItTakes holds the race of TestSupersedeReleaseRace
// open where it is narrowest: the newcomer has read the waiter's node as a
// waiter's, and before its write telling it to leave lands, the holder
// releases and the waiter takes the lock. The write then tells a holder,
// which must go on holding (it is next, and must run), while the newcomer
// waits behind it and takes the lock after it: one runs next, then the
// other, never both, and nothing is left.
func TestSupersedeToldAsItTakes(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	addr := shared.Server(t).Addrs()[0]
	path := testPath(t)
	holder, err := Acquire(ctx, client(t), path, supersedeReq(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	waiter := make(chan acquired, 1)
	wc := client(t)
	go func() {
		l, err := Acquire(ctx, wc, path, supersedeReq(1, nil))
		waiter <- acquired{who: 1, l: l, err: err}
	}()
	awaitWatches(t, ctx, addr, path, 2)
	// The hook runs in the newcomer's goroutine: it hands over the
	// waiter's outcome once the waiter has taken the lock.
	told := make(chan acquired, 1)
	var once sync.Once
	supersedeRead = func() {
		once.Do(func() {
			if err := holder.Release(ctx); err != nil {
				t.Error(err)
			}
			told <- <-waiter
		})
	}
	t.Cleanup(func() { supersedeRead = nil })
	newcomer := make(chan acquired, 1)
	nc := client(t)
	go func() {
		l, err := Acquire(ctx, nc, path, supersedeReq(2, nil))
		newcomer <- acquired{who: 2, l: l, err: err}
	}()
	var w acquired
	select {
	case w = <-told:
	case n := <-newcomer:
		t.Fatalf("the newcomer never read a waiter's node: %v", n.err)
	}
	if w.err != nil {
		t.Fatalf("the waiter that became next: %v, want it to hold", w.err)
	}
	// The newcomer waits: once it watches the one that held on, its
	// write is done.
	zktest.Eventually(t, 10*time.Second, "the newcomer to watch the one ahead", func() bool {
		watched, err := zktest.Wchp(ctx, addr)
		return err == nil && slices.Contains(watched[w.l.Node], nc.SessionID())
	})
	data, _, err := raw(t).Get(w.l.Node)
	if err != nil || supersededIn(data) == nil {
		t.Fatalf("the holder's node (%v) was not told to leave: %s", err, data)
	}
	if err := w.l.Verify(ctx); err != nil {
		t.Fatalf("the holder told to leave: %v, want it to hold on", err)
	}
	select {
	case n := <-newcomer:
		t.Fatalf("the newcomer ended (%v) while the waiter held", n.err)
	default:
	}
	if err := w.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	n := <-newcomer
	if n.err != nil {
		t.Fatalf("newcomer: %v", n.err)
	}
	if err := n.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	assertGone(t, path)
}
