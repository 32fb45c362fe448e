package recipe

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// TestSharedLock: readers hold together, a writer waits for them and holds
// alone, and readers behind the writer wait for it (FIFO, no starvation).
func TestSharedLock(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 30*time.Second)
	r1, err := Acquire(ctx, client(t), path, Request{Mode: ModeShared, Data: zdata()})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Acquire(ctx, client(t), path, Request{Mode: ModeShared, Data: zdata()})
	if err != nil {
		t.Fatalf("a second reader must hold alongside the first: %v", err)
	}
	if !strings.Contains(r1.Node, "-__READ__") {
		t.Errorf("reader node %s", r1.Node)
	}
	// A writer queues behind the readers.
	wDone := make(chan *Lease, 1)
	wc := client(t)
	go func() {
		w, err := Acquire(ctx, wc, path, Request{Data: zdata()})
		if err != nil {
			t.Error(err)
		}
		wDone <- w
	}()
	conn := raw(t)
	zktest.Eventually(t, 10*time.Second, "the writer to queue", func() bool {
		ch, _, _ := conn.Children(path)
		return len(ch) == 3
	})
	// A reader behind the waiting writer must not overtake it.
	if _, err := Acquire(ctx, client(t), path, Request{Mode: ModeShared, Wait: NoWait, Data: zdata()}); !errors.As(err, new(*BusyError)) {
		t.Fatalf("a reader behind a waiting writer got in: %v", err)
	}
	r1.Release(ctx)
	select {
	case <-wDone:
		t.Fatal("the writer got in while a reader still held")
	case <-time.After(200 * time.Millisecond):
	}
	r2.Release(ctx)
	w := <-wDone
	if w == nil {
		t.FailNow()
	}
	if _, err := Acquire(ctx, client(t), path, Request{Mode: ModeShared, Wait: NoWait, Data: zdata()}); !errors.As(err, new(*BusyError)) {
		t.Fatalf("a reader got in while the writer held: %v", err)
	}
	w.Release(ctx)
	assertGone(t, path)
}

// TestSharedHerdFree: with a writer holding and readers and writers queued
// behind it, each waiter has exactly one watch; a node is watched either by
// the one writer right behind it or by the run of readers right behind it,
// who all hold once it goes.
func TestSharedHerdFree(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	holder, err := Acquire(ctx, client(t), path, Request{Data: zdata()})
	if err != nil {
		t.Fatal(err)
	}
	addr := shared.Server(t).Addrs()[0]
	before, _ := zktest.Mntr(ctx, addr)
	S, X := ModeShared, ModeExclusive
	kinds := []Mode{S, S, S, X, S, S, X, X, S, S}
	conn := raw(t)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	// The first run of readers (kinds[0:3]) must hold together: each of
	// them keeps the lock until all three hold, so how quickly each one
	// is scheduled after the holder leaves cannot decide the outcome. One
	// that waits in vain (they were let in one by one) reports it.
	const firstRun = 3
	var inFirstRun atomic.Int32
	allIn := make(chan struct{})
	for i, k := range kinds {
		c := client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Acquire(wctx, c, path, Request{Mode: k, Data: zdata()})
			if err != nil {
				t.Error(err)
				return
			}
			if i < firstRun {
				if inFirstRun.Add(1) == firstRun {
					close(allIn)
				}
				select {
				case <-allIn:
				case <-time.After(10 * time.Second):
					t.Errorf("reader %d held alone for 10s: the first run of %d readers should hold together", i, firstRun)
				}
			}
			l.Release(ctx)
		}()
		// Join one at a time so the queue order is kinds' order.
		zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool {
			ch, _, _ := conn.Children(path)
			return len(ch) == i+2
		})
	}
	watched := awaitWatches(t, ctx, addr, path, 2*len(kinds))
	children, _, _ := conn.Children(path)
	q := Contenders(children)
	others := othersWatching(t, conn, path, q, watched)
	for i, c := range q {
		want := 0
		// Who should watch node i: the writer right behind it, or the
		// readers right behind it (if i is a writer).
		if i+1 < len(q) {
			if q[i+1].Kind == Exclusive {
				want = 1
			} else if q[i].Kind == Exclusive {
				for j := i + 1; j < len(q) && q[j].Kind == Shared; j++ {
					want++
				}
			}
		}
		if got := others[i]; got != want {
			t.Errorf("node %d (%s) watched by %d other sessions, want %d", i, c.Kind, got, want)
		}
	}
	after, _ := zktest.Mntr(ctx, addr)
	if d := atoi(t, after["zk_watch_count"]) - atoi(t, before["zk_watch_count"]); d != 2*len(kinds) {
		t.Errorf("zk_watch_count grew by %d, want %d (two per waiter: the node ahead and its own)", d, 2*len(kinds))
	}
	holder.Release(ctx)
	wg.Wait()
	assertGone(t, path)
}

// TestSemaphore: at most limit holders; the rest wait herd-free (only the
// mutex holder watches the leases); a mismatched limit is refused.
func TestSemaphore(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	const limit = 3
	data := func() []byte { return zklockData(limit) }
	var held []*Lease
	for i := 0; i < limit; i++ {
		l, err := Acquire(ctx, client(t), path, Request{Mode: ModeLimit(limit), Data: data()})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(l.Node, path+"/leases/_c_") || !strings.Contains(l.Node, "-lease-") {
			t.Errorf("lease node %s", l.Node)
		}
		held = append(held, l)
	}
	if _, err := Acquire(ctx, client(t), path, Request{Mode: ModeLimit(limit), Data: data(), Wait: NoWait}); !errors.As(err, new(*BusyError)) {
		t.Fatalf("a fourth lease: %v", err)
	}
	if _, err := Acquire(ctx, client(t), path, Request{Mode: ModeLimit(5), Wait: NoWait}); !errors.Is(err, ErrLimitMismatch) {
		t.Fatalf("a different limit: %v", err)
	}

	addr := shared.Server(t).Addrs()[0]
	before, _ := zktest.Mntr(ctx, addr)
	const waiters = 4
	got := make(chan *Lease, waiters)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < waiters; i++ {
		c := client(t)
		go func() {
			l, err := Acquire(wctx, c, path, Request{Mode: ModeLimit(limit), Data: data()})
			if err != nil && wctx.Err() == nil {
				t.Error(err)
			}
			got <- l
		}()
	}
	conn := raw(t)
	zktest.Eventually(t, 10*time.Second, "the waiters to queue", func() bool {
		ch, _, _ := conn.Children(path + "/locks")
		return len(ch) == waiters
	})
	// One mutex holder with a child watch on the leases and a data watch
	// on its own lease (a revocation); the other waiters each watch one
	// mutex node, and their own.
	zktest.Eventually(t, 10*time.Second, "the watches", func() bool {
		after, _ := zktest.Mntr(ctx, addr)
		return atoi(t, after["zk_watch_count"])-atoi(t, before["zk_watch_count"]) == 2*waiters
	})
	watched, _ := zktest.Wchp(ctx, addr)
	children, _, _ := conn.Children(path + "/locks")
	mq := Contenders(children)
	for i, n := range othersWatching(t, conn, path+"/locks", mq, watched) {
		if want := min(1, len(mq)-1-i); n != want {
			t.Errorf("mutex node %d watched by %d other sessions, want %d", i, n, want)
		}
	}
	q, err := Inspect(ctx, client(t), path)
	// The leases first (the limit's holding, then the one beyond it),
	// then those waiting in the mutex to create theirs.
	leases := 0
	for _, e := range q.Entries {
		if e.Under == semLeases {
			leases++
		} else if e.Holding {
			t.Errorf("a contender in the semaphore's mutex shown as holding: %+v", e)
		}
	}
	if err != nil || len(q.Holders()) != limit || leases != limit+1 || q.Entries[limit].Holding || q.Entries[0].Limit != limit {
		t.Errorf("semaphore queue: %+v %v", q, err)
	}
	// Holders leave in any order; each departure lets one waiter in.
	for _, i := range []int{1, 0, 2} {
		held[i].Release(ctx)
		l := <-got
		held[i] = l
	}
	select {
	case <-got:
		t.Fatal("a fourth holder got in")
	case <-time.After(200 * time.Millisecond):
	}
	for _, l := range held {
		l.Release(ctx)
	}
	(<-got).Release(ctx)
	assertGone(t, path)
}

// TestFlavors: zklock's kazoo and curator-rw names parse back, and each
// flavor refuses a path held by another library that cannot see its nodes.
func TestFlavors(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	for _, tc := range []struct {
		flavor Flavor
		mode   Mode
		infix  string
	}{
		{FlavorKazoo, ModeExclusive, "__lock__"},
		{FlavorKazoo, ModeShared, "__rlock__"},
		{FlavorCuratorRW, ModeExclusive, "-__WRIT__"},
		{FlavorCuratorRW, ModeShared, "-__READ__"},
		{FlavorCurator, ModeExclusive, "-lock-"},
	} {
		path := testPath(t)
		l, err := Acquire(ctx, client(t), path, Request{Flavor: tc.flavor, Mode: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		name := l.name()
		c, ok := ParseContender(name)
		if !ok || !strings.Contains(name, tc.infix) || c.Kind != tc.mode.Kind() {
			t.Errorf("%s %s: node %s parses as %+v", tc.flavor, tc.mode.Kind(), name, c)
		}
		l.Release(ctx)
	}

	conn := raw(t)
	foreign := func(path, name, data string) {
		t.Helper()
		if err := client(t).EnsurePath(ctx, path, new([]string)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Create(path+"/"+name, []byte(data), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	// A Kazoo client holds: zklock's Curator names would be invisible to it.
	path := testPath(t)
	foreign(path, "0123456789abcdef0123456789abcdef__lock__", "kazoo-worker")
	_, err := Acquire(ctx, client(t), path, Request{})
	if !isFlavorConflict(err, FlavorKazoo) {
		t.Errorf("curator flavor on a Kazoo path: %v", err)
	}
	if ch, _, _ := conn.Children(path); len(ch) != 1 {
		t.Errorf("the refused attempt left nodes: %v", ch)
	}
	// With the right flavor it queues behind the Kazoo holder.
	if _, err := Acquire(ctx, client(t), path, Request{Flavor: FlavorKazoo, Wait: NoWait}); !errors.As(err, new(*BusyError)) {
		t.Errorf("kazoo flavor behind a Kazoo holder: %v", err)
	}
	// A Curator read-write lock does not see "-lock-" nodes.
	path = testPath(t)
	foreign(path, "_c_11111111-2222-4333-8444-555555555555-__WRIT__", "10.0.0.9")
	if _, err := Acquire(ctx, client(t), path, Request{}); !isFlavorConflict(err, FlavorCuratorRW) {
		t.Errorf("curator flavor on a Curator RW path: %v", err)
	}
	if _, err := Acquire(ctx, client(t), path, Request{Flavor: FlavorCuratorRW, Mode: ModeShared, Wait: NoWait}); !errors.As(err, new(*BusyError)) {
		t.Errorf("curator-rw reader behind a Curator writer: %v", err)
	}
	// Other zklocks see every flavor: mixing them is fine.
	path = testPath(t)
	k, err := Acquire(ctx, client(t), path, Request{Flavor: FlavorKazoo, Data: zklockData(0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(ctx, client(t), path, Request{Wait: NoWait}); !errors.As(err, new(*BusyError)) {
		t.Errorf("curator flavor behind a zklock kazoo-flavor holder: %v", err)
	}
	k.Release(ctx)
}

// zdata is zklock's owner data: other zklocks see every flavor.
func zdata() []byte { return zklockData(0) }

// isFlavorConflict reports whether err is a flavor conflict that names
// flavor as the one that would share the path.
func isFlavorConflict(err error, flavor Flavor) bool {
	var e *FlavorConflictError
	return errors.As(err, &e) && errors.Is(err, ErrFlavorConflict) && e.Flavor == flavor
}
