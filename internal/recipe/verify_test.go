package recipe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// acquireAsync starts Acquire and returns a channel for its outcome.
type outcome struct {
	l   *Lease
	err error
}

func acquireAsync(ctx context.Context, t *testing.T, path string, r Request) <-chan outcome {
	c := client(t)
	out := make(chan outcome, 1)
	go func() {
		var o outcome
		o.l, o.err = Acquire(ctx, c, path, r)
		out <- o
	}()
	return out
}

// queueOf lists path's contenders as the server has them.
func queueOf(t *testing.T, conn *zk.Conn, path string) []Contender {
	t.Helper()
	ch, _, err := conn.Children(path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return Contenders(ch)
}

// TestDeletedWaiterDoesNotHold deletes the head of the queue and the waiter
// behind it in one transaction, the waiter's node first, as an operator's
// deleteall may. The waiter is woken by its predecessor's deletion, the
// shortcut that saves a listing; it must see that its own node is gone too
// and not believe it holds the lock. The same for a read lock behind a write
// lock, and for a waiter further back whose node alone is deleted.
func TestDeletedWaiterDoesNotHold(t *testing.T) {
	for _, mode := range []Mode{ModeExclusive, ModeShared} {
		t.Run(mode.Kind().String(), func(t *testing.T) {
			path := testPath(t)
			ctx := ctxT(t, 30*time.Second)
			holder, err := Acquire(ctx, client(t), path, Request{Data: zdata()})
			if err != nil {
				t.Fatal(err)
			}
			conn := raw(t)
			var q []Contender
			// One at a time: two started together may queue in either order.
			waiter := acquireAsync(ctx, t, path, Request{Mode: mode, Data: zdata()})
			zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { return len(queueOf(t, conn, path)) == 2 })
			back := acquireAsync(ctx, t, path, Request{Data: zdata()})
			zktest.Eventually(t, 10*time.Second, "two waiters to watch", func() bool {
				q = queueOf(t, conn, path)
				return len(q) == 3
			})
			// Let the waiters set their watches (a few ms), then delete.
			zktest.Eventually(t, 10*time.Second, "the watches", func() bool {
				return watchers(t, path+"/"+q[0].Name) == 1 && watchers(t, path+"/"+q[1].Name) == 2 &&
					watchers(t, path+"/"+q[2].Name) == 1
			})
			if _, err := conn.Multi(&zk.DeleteRequest{Path: path + "/" + q[1].Name, Version: -1},
				&zk.DeleteRequest{Path: path + "/" + q[0].Name, Version: -1}); err != nil {
				t.Fatal(err)
			}
			r := <-waiter
			var gone *NodeGoneError
			if !errors.As(r.err, &gone) || !errors.Is(r.err, ErrNodeGone) || gone.Node != path+"/"+q[1].Name {
				t.Fatalf("a waiter whose node was deleted: lease %v, err %v; want a NodeGoneError", r.l, r.err)
			}
			// The one further back now heads the queue and holds.
			b := <-back
			if b.err != nil {
				t.Fatal(b.err)
			}
			// Now delete a waiter's node while it waits behind a live holder.
			waiter = acquireAsync(ctx, t, path, Request{Mode: mode, Data: zdata()})
			zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { q = queueOf(t, conn, path); return len(q) == 2 })
			zktest.Eventually(t, 10*time.Second, "its watches", func() bool { return watchers(t, path+"/"+q[1].Name) == 1 })
			if err := conn.Delete(path+"/"+q[1].Name, -1); err != nil {
				t.Fatal(err)
			}
			if r := <-waiter; !errors.As(r.err, &gone) {
				t.Fatalf("a waiter whose node was deleted behind a holder: lease %v, err %v", r.l, r.err)
			}
			b.l.Release(ctx)
			holder.Release(ctx)
			assertGone(t, path)
		})
	}
}

// watchers is how many sessions watch node, as the server says.
func watchers(t *testing.T, node string) int {
	w, err := zktest.Wchp(ctxT(t, 5*time.Second), shared.Server(t).Addrs()[0])
	if err != nil {
		return -1
	}
	return len(w[node])
}

// TestDeletedLeaseDoesNotHold: a semaphore waiter whose lease is deleted
// together with the lease it waits for does not take the freed place.
func TestDeletedLeaseDoesNotHold(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 30*time.Second)
	holder, err := Acquire(ctx, client(t), path, Request{Mode: ModeLimit(1)})
	if err != nil {
		t.Fatal(err)
	}
	waiter := acquireAsync(ctx, t, path, Request{Mode: ModeLimit(1)})
	conn := raw(t)
	var q []Contender
	// Whether the waiter has listed the leases yet or not, it must find
	// its lease gone: wchp cannot show its child watch, and need not.
	zktest.Eventually(t, 10*time.Second, "the waiter's lease", func() bool {
		q = queueOf(t, conn, path+"/leases")
		return len(q) == 2
	})
	if _, err := conn.Multi(&zk.DeleteRequest{Path: path + "/leases/" + q[1].Name, Version: -1},
		&zk.DeleteRequest{Path: path + "/leases/" + q[0].Name, Version: -1}); err != nil {
		t.Fatal(err)
	}
	if r := <-waiter; !errors.As(r.err, new(*NodeGoneError)) {
		t.Fatalf("a semaphore waiter whose lease was deleted: lease %v, err %v", r.l, r.err)
	}
	holder.Release(ctx)
	assertGone(t, path)
}

// TestVerifyAll: a lock taken earlier whose node was deleted is caught
// before the command could start; intact locks pass.
func TestVerifyAll(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	c := client(t)
	a, err := Acquire(ctx, c, testPath(t)+"-a", Request{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(ctx, c, testPath(t)+"-b", Request{})
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyAll(ctx, []*Lease{a, b}); err != nil {
		t.Fatalf("intact locks: %v", err)
	}
	if err := raw(t).Delete(a.Node, -1); err != nil {
		t.Fatal(err)
	}
	var gone *NodeGoneError
	if err := VerifyAll(ctx, []*Lease{a, b}); !errors.As(err, &gone) || gone.Node != a.Node {
		t.Fatalf("a deleted lock: %v", err)
	}
	b.Release(ctx)
}

// TestFailedCreateRemovesParents: when the contender's create fails after
// zklock made the lock path and its parents, those containers are deleted
// again: a container that never had a child is never reaped by the server.
// The server refuses the node's name here (a character only a stem could
// carry past ValidatePath).
func TestFailedCreateRemovesParents(t *testing.T) {
	base := testPath(t)
	path := base + "/deeper/lock"
	c := client(t)
	_, err := createProtected(ctxT(t, 10*time.Second), c, path, "bad\uFFFE-", nil)
	if err == nil {
		t.Fatal("the server took a node name with U+FFFE")
	}
	conn := raw(t)
	for _, p := range []string{path, base + "/deeper", base} {
		if ok, _, err := conn.Exists(p); err != nil || ok {
			t.Errorf("%s is left behind after a failed create (%v)", p, err)
		}
	}
}
