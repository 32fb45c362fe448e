package recipe

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
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

// TestBusyHoldersKeepLeaving: every holder a try finds leaves before its
// data is read, more often than the try lists again. The busy error it
// gives up with must say that the data was never read (Unread), so that
// the busy line does not guess the holder's client from its node's name:
// a zklock node is named as Curator's, and was shown as a "curator
// client".
func TestBusyHoldersKeepLeaving(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := testPath(t)
	first, err := Acquire(ctx, client(t), path, Request{Wait: NoWait, Data: zdata()})
	if err != nil {
		t.Fatal(err)
	}
	// The others queue behind it, as zklock's nodes are named: each
	// holds in turn once the one before it leaves.
	conn := raw(t)
	holders := []string{first.Node}
	for i := range maxBusyRelists {
		node, err := conn.Create(fmt.Sprintf("%s/_c_%032x-lock-", path, i+1), zdata(), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		holders = append(holders, node)
	}
	busyListed = func() {
		if err := conn.Delete(holders[0], -1); err != nil {
			t.Error(err)
		}
		holders = holders[1:]
		if len(holders) == 0 {
			busyListed = nil
		}
	}
	t.Cleanup(func() { busyListed = nil })
	_, err = Acquire(ctx, client(t), path, Request{Wait: NoWait, Data: zdata()})
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(busy.Unread, zk.ErrNoNode) || len(busy.Data) != 0 {
		t.Fatalf("a try whose holders all left as it read them: %#v, want busy with its holder's data unread (no node)", err)
	}
}
