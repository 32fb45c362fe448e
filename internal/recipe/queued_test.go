package recipe

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// hookLog records, in order, which of a Request's hooks were called.
type hookLog struct {
	mu     sync.Mutex
	events []string
}

func (h *hookLog) add(e string) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *hookLog) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// hooked is r with each hook recording its call in h.
func hooked(r Request, h *hookLog) Request {
	r.OnQueued = func() { h.add("queued") }
	r.OnNext = func() { h.add("next") }
	r.OnWait = func(Waiting) { h.add("wait") }
	return r
}

// TestOnQueued: OnQueued comes once per Acquire, before any other hook,
// whether the lock is free, busy for a waiter, busy for a try (which is
// queued, then leaves), or a semaphore (its node in the mutex's queue, not
// its lease as well).
func TestOnQueued(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	c := client(t)
	mode := ModeLimit(1)
	data := zklockData(1)
	for _, tc := range []struct {
		name string
		r    Request
	}{
		{"mutex", Request{}},
		{"semaphore", Request{Mode: mode, Data: data}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testPath(t)
			var free hookLog
			holder, err := Acquire(ctx, c, path, hooked(tc.r, &free))
			if err != nil {
				t.Fatal(err)
			}
			if got := free.got(); !slices.Equal(got, []string{"queued", "next"}) {
				t.Errorf("a free lock: hooks %v, want queued, next", got)
			}
			var try hookLog
			tr := tc.r
			tr.Wait = NoWait
			if _, err := Acquire(ctx, c, path, hooked(tr, &try)); !errors.As(err, new(*BusyError)) {
				t.Fatalf("a try on a held lock: %v, want busy", err)
			}
			if got := try.got(); !slices.Equal(got, []string{"queued"}) {
				t.Errorf("a busy try: hooks %v, want queued", got)
			}
			var waiter hookLog
			got := acquireAsync(ctx, t, path, hooked(tc.r, &waiter))
			zktest.Eventually(t, 10*time.Second, "the waiter to wait", func() bool { return slices.Contains(waiter.got(), "wait") })
			holder.Release(ctx)
			l := leaseOf(t, got)
			if l == nil {
				t.FailNow()
			}
			l.Release(ctx)
			if got := waiter.got(); !slices.Equal(got, []string{"queued", "next", "wait"}) {
				t.Errorf("a waiter: hooks %v, want queued, next, wait", got)
			}
		})
	}
}
