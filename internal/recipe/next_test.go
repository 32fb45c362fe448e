package recipe

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// nextCounter counts OnNext calls and says when the first one came.
type nextCounter struct {
	n     atomic.Int32
	first chan struct{}
}

func newNextCounter() *nextCounter { return &nextCounter{first: make(chan struct{})} }

func (c *nextCounter) onNext() {
	if c.n.Add(1) == 1 {
		close(c.first)
	}
}

func (c *nextCounter) fired() bool { return c.n.Load() > 0 }

// leaseOf waits for an acquisition started by acquireAsync; nil (and the
// error reported) if it failed.
func leaseOf(t *testing.T, ch <-chan outcome) *Lease {
	t.Helper()
	o := <-ch
	if o.err != nil {
		t.Error(o.err)
	}
	return o.l
}

// TestOnNextMutex: a waiter whose predecessor holds is told at once that
// it is next; one further back is told only when it holds, and each
// exactly once.
func TestOnNextMutex(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	conn := raw(t)
	held := newNextCounter()
	holder, err := Acquire(ctx, client(t), path, Request{OnNext: held.onNext})
	if err != nil {
		t.Fatal(err)
	}
	if held.n.Load() != 1 {
		t.Fatalf("a lock taken at once: OnNext called %d times, want 1", held.n.Load())
	}

	second, third := newNextCounter(), newNextCounter()
	got2 := acquireAsync(ctx, t, path, Request{OnNext: second.onNext})
	select {
	case <-second.first:
	case <-ctx.Done():
		t.Fatal("the waiter behind the holder was never told it is next")
	}
	got3 := acquireAsync(ctx, t, path, Request{OnNext: third.onNext})
	awaitWatches(t, ctx, shared.Server(t).Addrs()[0], path, 4) // two waiters, each on its own node and its predecessor
	if third.fired() {
		t.Fatal("a waiter behind a waiter was told it is next")
	}

	holder.Release(ctx)
	l2 := leaseOf(t, got2)
	if l2 == nil {
		t.FailNow()
	}
	// The third waiter is next now, but it watches the second alone and
	// cannot know: it is told when it holds.
	zktest.Eventually(t, 10*time.Second, "the second to hold", func() bool {
		ch, _, _ := conn.Children(path)
		return len(ch) == 2
	})
	if third.fired() {
		t.Fatal("the third waiter was told it is next while it could not know")
	}
	l2.Release(ctx)
	l3 := leaseOf(t, got3)
	if l3 == nil {
		t.FailNow()
	}
	defer l3.Release(ctx)
	if n2, n3 := second.n.Load(), third.n.Load(); n2 != 1 || n3 != 1 {
		t.Fatalf("OnNext called %d and %d times, want once each", n2, n3)
	}
}

// TestOnNextNoWait: a try on a free lock is next (it holds at once); one
// on a busy lock never is.
func TestOnNextNoWait(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 30*time.Second)
	free := newNextCounter()
	l, err := Acquire(ctx, client(t), path, Request{Wait: NoWait, OnNext: free.onNext})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	busy := newNextCounter()
	_, err = Acquire(ctx, client(t), path, Request{Wait: NoWait, OnNext: busy.onNext})
	if !errors.As(err, new(*BusyError)) {
		t.Fatalf("a try on a held lock: %v", err)
	}
	if free.n.Load() != 1 || busy.fired() {
		t.Fatalf("OnNext: %d calls for the free lock, %d for the busy one; want 1 and 0", free.n.Load(), busy.n.Load())
	}
}

// TestOnNextShared: readers behind a holding writer are next (its
// release lets them all in); a writer behind them is next once they hold.
func TestOnNextShared(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	writer, err := Acquire(ctx, client(t), path, Request{Mode: ModeExclusive, Flavor: FlavorCuratorRW})
	if err != nil {
		t.Fatal(err)
	}
	r1, r2, w2 := newNextCounter(), newNextCounter(), newNextCounter()
	got1 := acquireAsync(ctx, t, path, Request{Mode: ModeShared, Flavor: FlavorCuratorRW, OnNext: r1.onNext})
	<-r1.first
	got2 := acquireAsync(ctx, t, path, Request{Mode: ModeShared, Flavor: FlavorCuratorRW, OnNext: r2.onNext})
	<-r2.first
	gotW := acquireAsync(ctx, t, path, Request{Mode: ModeExclusive, Flavor: FlavorCuratorRW, OnNext: w2.onNext})
	awaitWatches(t, ctx, shared.Server(t).Addrs()[0], path, 6) // r1, r2 on the writer, w2 on r2, each on its own node too
	if w2.fired() {
		t.Fatal("a writer behind waiting readers was told it is next")
	}
	writer.Release(ctx)
	l1, l2 := leaseOf(t, got1), leaseOf(t, got2)
	if l1 == nil || l2 == nil {
		t.FailNow()
	}
	// The readers hold; the writer learns it when r2, the one it
	// watches, leaves and it lists the queue again behind r1, a holder.
	l2.Release(ctx)
	select {
	case <-w2.first:
	case <-ctx.Done():
		t.Fatal("the writer behind a holding reader was never told it is next")
	}
	l1.Release(ctx)
	lw := leaseOf(t, gotW)
	if lw == nil {
		t.FailNow()
	}
	lw.Release(ctx)
	for i, c := range []*nextCounter{r1, r2, w2} {
		if c.n.Load() != 1 {
			t.Errorf("contender %d: OnNext called %d times, want 1", i, c.n.Load())
		}
	}
}

// TestOnNextSemaphore: the contender holding the semaphore's mutex is next
// (the next lease released is its); those queued for the mutex are not.
func TestOnNextSemaphore(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	conn := raw(t)
	mode := ModeLimit(1)
	data := zklockData(1)
	holder, err := Acquire(ctx, client(t), path, Request{Mode: mode, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	first, second := newNextCounter(), newNextCounter()
	got1 := acquireAsync(ctx, t, path, Request{Mode: mode, Data: data, OnNext: first.onNext})
	<-first.first
	got2 := acquireAsync(ctx, t, path, Request{Mode: mode, Data: data, OnNext: second.onNext})
	zktest.Eventually(t, 10*time.Second, "the second to queue for the mutex", func() bool {
		ch, _, _ := conn.Children(path + "/locks")
		return len(ch) == 2
	})
	awaitWatches(t, ctx, shared.Server(t).Addrs()[0], path+"/locks", 2)
	if second.fired() {
		t.Fatal("a contender queued for the semaphore's mutex was told it is next")
	}
	holder.Release(ctx)
	l1 := leaseOf(t, got1)
	if l1 == nil {
		t.FailNow()
	}
	<-second.first // it holds the mutex now, waiting for l1's lease
	l1.Release(ctx)
	l2 := leaseOf(t, got2)
	if l2 == nil {
		t.FailNow()
	}
	l2.Release(ctx)
	if first.n.Load() != 1 || second.n.Load() != 1 {
		t.Fatalf("OnNext called %d and %d times, want once each", first.n.Load(), second.n.Load())
	}
}
