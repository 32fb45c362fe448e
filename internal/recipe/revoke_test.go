package recipe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestRevokedWaiterDoesNotHold revokes a waiter and deletes the holder
// ahead of it in one transaction, the revocation first. The waiter is woken
// by the holder's deletion, the shortcut that takes the lock without a
// listing; it must see the request that reached its own watch first and
// leave the queue instead of holding. A revoke of a waiter further back
// alone makes it leave at once, and the holder is left alone.
func TestRevokedWaiterDoesNotHold(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 30*time.Second)
	c := client(t)
	if _, err := Acquire(ctx, client(t), path, Request{Data: zdata()}); err != nil {
		t.Fatal(err)
	}
	conn := raw(t)
	var q []Contender
	// One at a time: two started together may queue in either order.
	waiter := acquireAsync(ctx, t, path, Request{Data: zdata()})
	zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { return len(queueOf(t, conn, path)) == 2 })
	back := acquireAsync(ctx, t, path, Request{Data: zdata()})
	zktest.Eventually(t, 10*time.Second, "two waiters", func() bool { q = queueOf(t, conn, path); return len(q) == 3 })
	zktest.Eventually(t, 10*time.Second, "the watches", func() bool {
		return watchers(t, path+"/"+q[0].Name) == 1 && watchers(t, path+"/"+q[1].Name) == 2 &&
			watchers(t, path+"/"+q[2].Name) == 1
	})
	if _, err := conn.Multi(&zk.SetDataRequest{Path: path + "/" + q[1].Name, Data: revokeMessage, Version: -1},
		&zk.DeleteRequest{Path: path + "/" + q[0].Name, Version: -1}); err != nil {
		t.Fatal(err)
	}
	r := <-waiter
	var revoked *RevokedError
	if !errors.As(r.err, &revoked) || revoked.Node != path+"/"+q[1].Name || !revoked.Pending() {
		t.Fatalf("a revoked waiter woken by the holder's release: lease %v, err %v; want a RevokedError", r.l, r.err)
	}
	b := <-back
	if b.err != nil {
		t.Fatal(b.err)
	}

	// A waiter behind a live holder, revoked by Revoke with a record: it
	// leaves at once, naming who asked; the holder keeps the lock.
	waiter = acquireAsync(ctx, t, path, Request{Data: zdata()})
	zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { q = queueOf(t, conn, path); return len(q) == 2 })
	zktest.Eventually(t, 10*time.Second, "its watches", func() bool { return watchers(t, path+"/"+q[1].Name) == 1 })
	by := Revocation{Host: "ops-1", PID: 4711, User: "ann"}
	done, err := Revoke(ctx, c, path, q[1].Name, by)
	if asked := done.Asked; err != nil || len(asked) != 1 || asked[0].Holding {
		t.Fatalf("Revoke of the waiter: %v, %+v", err, asked)
	}
	r = <-waiter
	if !errors.As(r.err, &revoked) || revoked.Host != "ops-1" || revoked.PID != 4711 || revoked.User != "ann" {
		t.Fatalf("a revoked waiter: lease %v, err %v; want a RevokedError naming ann@ops-1 pid 4711", r.l, r.err)
	}
	zktest.Eventually(t, 10*time.Second, "the revoked waiter to leave", func() bool { return len(queueOf(t, conn, path)) == 1 })
	if err := b.l.Verify(ctx); err != nil {
		t.Fatalf("the holder lost its lock to a waiter's revocation: %v", err)
	}
	// Its own revocation shows in the holder's Verify, as before a command.
	if done, err := Revoke(ctx, c, path, "", Revocation{}); err != nil || len(done.Asked) != 1 || !done.Asked[0].Holding {
		t.Fatalf("Revoke of the holder: %v, %+v", err, done)
	}
	if err := b.l.Verify(ctx); !errors.As(err, &revoked) {
		t.Fatalf("Verify of a revoked holder: %v", err)
	}
	b.l.Release(ctx)
	assertGone(t, path)
}

// TestRevokeDuringHandoff: the holder releases between Revoke's listing
// and its request, and the waiter takes over. The request must reach the
// new holder, not end in "free". When the holder that left had already
// been asked to give up, its leaving was that request's effect: its
// successor is left alone.
func TestRevokeDuringHandoff(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 30*time.Second)
	c := client(t)
	conn := raw(t)
	first, err := Acquire(ctx, client(t), path, Request{Data: zdata()})
	if err != nil {
		t.Fatal(err)
	}
	waiter := acquireAsync(ctx, t, path, Request{Data: zdata()})
	var q []Contender
	zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { q = queueOf(t, conn, path); return len(q) == 2 })
	handoff := func() {
		revokeListed = nil
		first.Release(ctx)
		if w := <-waiter; w.err != nil {
			t.Errorf("the waiter: %v", w.err)
		}
	}
	revokeListed = handoff
	t.Cleanup(func() { revokeListed = nil })
	done, err := Revoke(ctx, c, path, "", Revocation{})
	if err != nil || len(done.Asked) != 1 || done.Asked[0].Name != q[1].Name || len(done.Left) != 1 {
		t.Fatalf("Revoke across a handoff: %v, %+v; want the new holder %s asked", err, done, q[1].Name)
	}
	data, _, err := conn.Get(path + "/" + q[1].Name)
	if err != nil || !isRevokeRequest(data) {
		t.Fatalf("the new holder's data %q (%v), want the request", data, err)
	}

	// Now the holder has a pending request. A second revoke lists it, it
	// obeys and leaves before the write, a third contender takes over:
	// that one is not asked.
	second := q[1].Name
	third := acquireAsync(ctx, t, path, Request{Data: zdata()})
	zktest.Eventually(t, 10*time.Second, "a third contender", func() bool { q = queueOf(t, conn, path); return len(q) == 2 })
	revokeListed = func() {
		revokeListed = nil
		if err := conn.Delete(path+"/"+second, -1); err != nil {
			t.Errorf("delete %s: %v", second, err)
		}
		w := <-third
		if w.err != nil {
			t.Errorf("the third contender: %v", w.err)
			return
		}
		t.Cleanup(func() { w.l.Release(context.Background()) })
	}
	done, err = Revoke(ctx, c, path, "", Revocation{})
	if err != nil || len(done.Asked) != 0 || len(done.Left) != 1 || !done.Left[0].Revoke.Pending() {
		t.Fatalf("Revoke of a holder already revoked, leaving: %v, %+v; want nobody asked", err, done)
	}
	data, _, err = conn.Get(path + "/" + q[1].Name)
	if err != nil || isRevokeRequest(data) {
		t.Fatalf("the third contender's data %q (%v): its predecessor's revocation reached it", data, err)
	}
}
