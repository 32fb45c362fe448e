package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/zkconn"
)

// The recipes' own tests (internal/recipe) prove exclusion, order and
// cleanup; these prove that each entry point of the facade reaches them
// and that what comes back is this package's types.

func TestMain(m *testing.M) { shared.Main(m) }

// hold acquires r at path, or fails the test, and releases the lease when
// the test ends.
func hold(t *testing.T, ctx context.Context, c *zkconn.Client, path string, r lock.Request) *lock.Lease {
	t.Helper()
	l, err := lock.Acquire(ctx, c, path, r)
	if err != nil {
		t.Fatalf("Acquire %s %v: %v", path, r.Mode, err)
	}
	t.Cleanup(func() { l.Release(context.Background()) })
	return l
}

func TestAcquireExclusive(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	a, b := shared.Client(t), shared.Client(t)
	l, err := lock.Acquire(ctx, a, path, lock.Request{Data: []byte("a")})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != path || l.Mode() != lock.Exclusive {
		t.Errorf("lease of %s %v, want %s exclusive", l.Path(), l.Mode(), path)
	}
	tok, err := l.FencingToken(ctx)
	if err != nil || tok <= 0 {
		t.Errorf("FencingToken = %d, %v", tok, err)
	}
	_, err = lock.Acquire(ctx, b, path, lock.Request{Wait: lock.NoWait})
	var busy *lock.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, lock.ErrBusy) || busy.Holder != l.Node() || string(busy.Data) != "a" {
		t.Fatalf("a try beside a holder: %#v, %v; want a *BusyError naming %s", busy, err, l.Node())
	}
	if err := l.Verify(ctx); err != nil {
		t.Errorf("Verify of a held lease: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if !errors.Is(l.Err(), lock.ErrReleased) {
		t.Errorf("Err after Release = %v, want ErrReleased", l.Err())
	}
	shared.AssertGone(t, l.Node())
	next := hold(t, ctx, b, path, lock.Request{Wait: lock.NoWait})
	if tok2, err := next.FencingToken(ctx); err != nil || tok2 <= tok {
		t.Errorf("next holder's token %d (%v), want more than %d", tok2, err, tok)
	}
}

func TestAcquireSharedAndSemaphore(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	a, b, c := shared.Client(t), shared.Client(t), shared.Client(t)
	r1 := hold(t, ctx, a, path+"/rw", lock.Request{Mode: lock.Shared, Wait: lock.NoWait})
	hold(t, ctx, b, path+"/rw", lock.Request{Mode: lock.Shared, Wait: lock.NoWait})
	_, err := lock.Acquire(ctx, c, path+"/rw", lock.Request{Wait: lock.NoWait})
	var flavor *lock.FlavorConflictError
	if !errors.As(err, &flavor) || flavor.Node != r1.Node() || !errors.Is(err, lock.ErrFlavorConflict) {
		t.Errorf("a mutex-named writer beside Curator readers: %v, want a *FlavorConflictError", err)
	}

	sem := path + "/sem"
	hold(t, ctx, a, sem, lock.Request{Mode: lock.Semaphore(2), Wait: lock.NoWait})
	hold(t, ctx, b, sem, lock.Request{Mode: lock.Semaphore(2), Wait: lock.NoWait})
	_, err = lock.Acquire(ctx, c, sem, lock.Request{Mode: lock.Semaphore(2), Wait: lock.NoWait})
	var busy *lock.BusyError
	if !errors.As(err, &busy) || busy.Limit != 2 {
		t.Errorf("a third lease of two: %v, want a *BusyError of limit 2", err)
	}
	_, err = lock.Acquire(ctx, c, sem, lock.Request{Wait: lock.NoWait})
	var kind *lock.KindConflictError
	if !errors.As(err, &kind) || !kind.Semaphore || !errors.Is(err, lock.ErrKindConflict) {
		t.Errorf("a mutex on a semaphore's path: %v, want a *KindConflictError", err)
	}
	if _, err := lock.Acquire(ctx, c, sem, lock.Request{Mode: lock.Semaphore(0)}); !errors.Is(err, lock.ErrBadRequest) {
		t.Errorf("a semaphore of no leases: %v, want ErrBadRequest", err)
	}
	if _, err := lock.Acquire(ctx, c, "/", lock.Request{}); !errors.Is(err, zkconn.ErrBadPath) {
		t.Errorf("a lock on the root: %v, want zkconn.ErrBadPath", err)
	}
	q, err := lock.Inspect(ctx, c, sem)
	if err != nil || !q.Semaphore || len(q.Contenders) != 2 {
		t.Errorf("Inspect of the semaphore: %+v, %v; want its two leases alone", q, err)
	}
}

func TestAcquireAll(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	c := shared.Client(t)
	paths := []string{path + "/b", path + "/a", path + "/b"}
	ls, err := lock.AcquireAll(ctx, c, paths, lock.Request{Wait: lock.WaitUntil(time.Now().Add(time.Minute))})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Path() != path+"/a" || ls[1].Path() != path+"/b" {
		t.Fatalf("AcquireAll(%q) held %d leases, want /a then /b", paths, len(ls))
	}
	if err := ls.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		shared.AssertGone(t, l.Node())
	}

	// A path that cannot be held releases the ones already held.
	other := shared.Client(t)
	hold(t, ctx, other, path+"/b", lock.Request{})
	_, err = lock.AcquireAll(ctx, c, paths, lock.Request{Wait: lock.NoWait})
	if !errors.Is(err, lock.ErrBusy) {
		t.Fatalf("AcquireAll beside a holder of one path: %v, want ErrBusy", err)
	}
	if q, err := lock.Inspect(ctx, c, path+"/a"); err != nil || len(q.Contenders) != 0 {
		t.Errorf("after a failed AcquireAll, %s holds %+v (%v), want nobody", path+"/a", q.Contenders, err)
	}
}

func TestWaitUntilTimesOut(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	a, b := shared.Client(t), shared.Client(t)
	hold(t, ctx, a, path, lock.Request{})
	_, err := lock.Acquire(ctx, b, path, lock.Request{Wait: lock.WaitUntil(time.Now().Add(100 * time.Millisecond))})
	if !errors.Is(err, lock.ErrWaitTimeout) {
		t.Fatalf("a wait past its deadline: %v, want ErrWaitTimeout", err)
	}
	if q, err := lock.Inspect(ctx, a, path); err != nil || len(q.Contenders) != 1 {
		t.Errorf("after the timeout the queue is %+v (%v), want the holder alone", q.Contenders, err)
	}
}

func TestInspect(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	a, b := shared.Client(t), shared.Client(t)
	l := hold(t, ctx, a, path, lock.Request{Mode: lock.Shared, Data: []byte("reader")})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the waiter if the test fails first
	waited := make(chan error, 1)
	go func() {
		_, err := lock.Acquire(wctx, b, path, lock.Request{Flavor: lock.FlavorCuratorRW, Data: []byte("writer")})
		waited <- err
	}()
	var q lock.Queue
	zktest.Eventually(t, 30*time.Second, "the writer to queue", func() bool {
		var err error
		q, err = lock.Inspect(ctx, a, path)
		return err == nil && len(q.Contenders) == 2
	})
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled writer: %v", err)
	}
	h, w := q.Contenders[0], q.Contenders[1]
	if h.Node != l.Node() || !h.Holding || h.Position != 1 || h.Mode != lock.Shared || string(h.Data) != "reader" || h.Session == 0 || h.Created.IsZero() {
		t.Errorf("holder %+v, want %s holding shared", h, l.Node())
	}
	if w.Holding || w.Position != 2 || w.Mode != lock.Exclusive || string(w.Data) != "writer" {
		t.Errorf("waiter %+v, want an exclusive waiter at 2", w)
	}
	shared.AssertGone(t, w.Node)
}

func TestRevoke(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	a, b := shared.Client(t), shared.Client(t)
	l := hold(t, ctx, a, path, lock.Request{})
	revoked := l.Revoked() // set the watch before the request
	asked, err := lock.Revoke(ctx, b, path, "")
	if err != nil || len(asked) != 1 || asked[0] != l.Node() {
		t.Fatalf("Revoke asked %q (%v), want %s", asked, err, l.Node())
	}
	var r *lock.RevokedError
	select {
	case r = <-revoked:
	case <-ctx.Done():
		t.Fatal("no revocation delivered")
	}
	if !errors.Is(r, lock.ErrRevoked) || r.Node != l.Node() || r.By == "" || r.At.IsZero() {
		t.Errorf("revocation %+v, want one by this process of %s", r, l.Node())
	}
	if err := l.Verify(ctx); !errors.As(err, &r) {
		t.Errorf("Verify of a revoked lease: %v, want a *RevokedError", err)
	}
	q, err := lock.Inspect(ctx, b, path)
	if err != nil || len(q.Contenders) != 1 || q.Contenders[0].Revoke.At.IsZero() {
		t.Errorf("Inspect after Revoke: %+v (%v), want the holder asked", q, err)
	}
}

func TestDoneWhenNodeDeleted(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	l := hold(t, ctx, shared.Client(t), path, lock.Request{})
	done := l.Done()
	if err := l.Err(); err != nil {
		t.Fatalf("Err of a held lease: %v", err)
	}
	if err := shared.Raw(t).Delete(l.Node(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Done stayed open after the node was deleted")
	}
	if !errors.Is(l.Err(), lock.ErrNodeGone) {
		t.Errorf("Err = %v, want ErrNodeGone", l.Err())
	}
}

func TestDoneWhenSessionExpires(t *testing.T) {
	ctx, path := shared.Ctx(t, time.Minute), shared.Path(t)
	proxy := zktest.NewProxyT(t, shared.Server(t).Addrs()[0])
	cs, err := zkconn.ParseConnString(proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	l := hold(t, ctx, c, path, lock.Request{})
	done := l.Done()
	proxy.Blackhole()
	raw := shared.Raw(t)
	zktest.Eventually(t, 30*time.Second, "the server to expire the session", func() bool {
		ok, _, err := raw.Exists(l.Node())
		return err == nil && !ok
	})
	proxy.Heal()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Done stayed open after the session expired")
	}
	if err := l.Err(); !zkconn.IsSessionLoss(err) {
		t.Errorf("Err = %v, want a session loss", err)
	}
}
