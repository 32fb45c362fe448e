package recipe

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestContenderNames: the names of a lock's queue in order and of a
// semaphore's leases and mutex waiters, as Entry.Listed gives them, with
// nothing read but listings; a path that does not exist has none.
func TestContenderNames(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	c := client(t)
	path := testPath(t)
	if names, err := ContenderNames(ctx, c, path); err != nil || len(names) != 0 {
		t.Fatalf("no path: %q, %v", names, err)
	}
	if _, err := Acquire(ctx, client(t), path, Request{Data: zdata()}); err != nil {
		t.Fatal(err)
	}
	conn := raw(t)
	acquireAsync(ctx, t, path, Request{Data: zdata()})
	var q []Contender
	zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { q = queueOf(t, conn, path); return len(q) == 2 })
	names, err := ContenderNames(ctx, c, path)
	if err != nil || !slices.Equal(names, []string{q[0].Name, q[1].Name}) {
		t.Errorf("a lock: %q, %v; want %q", names, err, []string{q[0].Name, q[1].Name})
	}

	sem := testPath(t) + "-sem"
	if _, err := Acquire(ctx, client(t), sem, Request{Mode: ModeLimit(1), Data: zdata()}); err != nil {
		t.Fatal(err)
	}
	acquireAsync(ctx, t, sem, Request{Mode: ModeLimit(1), Data: zdata()})
	// The waiter passes through the mutex and a lease of its own before it
	// settles to wait; once it has, list's names are among these, in the
	// same order (list folds the waiter's mutex node into its lease).
	var listed []string
	zktest.Eventually(t, 10*time.Second, "the waiter to settle, named as list names it", func() bool {
		names, err = ContenderNames(ctx, c, sem)
		q, qerr := Inspect(ctx, c, sem)
		listed = listed[:0]
		for _, e := range q.Entries {
			listed = append(listed, e.Listed())
		}
		return err == nil && qerr == nil && len(listed) == 2 && inOrder(listed, names)
	})
	if !strings.HasPrefix(names[0], semLeases+"/") {
		t.Errorf("a semaphore: %q; want its holder's lease first", names)
	}
}

// inOrder reports whether every element of sub is in all, in the same order.
func inOrder(sub, all []string) bool {
	i := 0
	for _, a := range all {
		if i < len(sub) && a == sub[i] {
			i++
		}
	}
	return i == len(sub)
}
