package lock

import (
	"context"
	"testing"
	"time"
)

// TestBusyHolderLeft: a try lists the queue, and the holder it found
// leaves before its data is read. The try must not report the lock busy,
// held by a node that no longer holds it: it lists again, finds itself at
// the head, and holds the lock.
func TestBusyHolderLeft(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := testPath(t)
	holder, err := Acquire(ctx, client(t), path, Request{Data: zdata()})
	if err != nil {
		t.Fatal(err)
	}
	busyListed = func() {
		busyListed = nil
		if err := holder.Release(ctx); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { busyListed = nil })
	l, err := Acquire(ctx, client(t), path, Request{Wait: NoWait, Data: zdata()})
	if err != nil {
		t.Fatalf("a try whose holder left before its data was read: %v, want the lock", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
