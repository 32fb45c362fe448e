package tree

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// TestReadWide: the pipelined walk finds every lock of a wide tree,
// each queue whole and in order, whatever order its replies come back in,
// with many reads in one request and, as for a server older than 3.6, one
// by one. The tree has locks at two depths, plain nodes without locks, and
// queues of several contenders, so that listings and reads overlap.
func TestReadWide(t *testing.T) {
	root := shared.Dir(t)
	conn := shared.Raw(t)
	const locks, perLock = 400, 4
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{root} {
		if _, err := conn.CreateContainer(p, nil, zk.FlagContainer, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	lockPath := func(i int) string {
		if i%3 == 0 {
			return fmt.Sprintf("%s/l%d", root, i)
		}
		return fmt.Sprintf("%s/g%d/l%d", root, i%7, i)
	}
	for g := range 7 {
		if _, err := conn.CreateContainer(fmt.Sprintf("%s/g%d", root, g), nil, zk.FlagContainer, acl); err != nil {
			t.Fatal(err)
		}
	}
	// Each lock's queue is created in order on its own goroutine; the
	// goroutines together keep many requests in flight.
	var wg sync.WaitGroup
	errs := make(chan error, locks)
	sem := make(chan struct{}, 64)
	for i := range locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := lockPath(i)
			if _, err := conn.CreateContainer(p, nil, zk.FlagContainer, acl); err != nil {
				errs <- err
				return
			}
			// A plain node beside the queue holds no lock.
			if _, err := conn.Create(p+"/notes", nil, zk.FlagEphemeral, acl); err != nil {
				errs <- err
				return
			}
			for k := range perLock {
				if _, err := conn.Create(p+"/_c_11111111-2222-4333-8444-555555555555-lock-", []byte(fmt.Sprintf("w%d-%d", i, k)), zk.FlagEphemeralSequential, acl); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for _, single := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-by-one=%v", single), func(t *testing.T) {
			oneByOne = single
			defer func() { oneByOne = false }()
			tree, err := Read(shared.Ctx(t, 30*time.Second), shared.Client(t), root)
			if err != nil {
				t.Fatal(err)
			}
			if len(tree.Queues) != locks || len(tree.Skipped) != 0 {
				t.Fatalf("%d queues, skipped %v; want %d queues", len(tree.Queues), tree.Skipped, locks)
			}
			byPath := map[string]Queue{}
			for _, q := range tree.Queues {
				byPath[q.Path] = q
			}
			for i := range locks {
				q, ok := byPath[lockPath(i)]
				if !ok || len(q.Entries) != perLock {
					t.Fatalf("%s: %+v", lockPath(i), q)
				}
				for k, e := range q.Entries {
					if string(e.Data) != fmt.Sprintf("w%d-%d", i, k) || e.Position != k+1 || e.Holding != (k == 0) || e.Path != q.Path {
						t.Fatalf("%s entry %d = %+v", q.Path, k, e)
					}
				}
			}
		})
	}
}

// TestReadSemaphore: a semaphore is one queue at its own path, with
// its limit: its leases (held, then one beyond the limit whose creator
// waits holding the mutex), then a contender waiting in the mutex. Its
// locks/leases nodes are not locks of their own.
func TestReadSemaphore(t *testing.T) {
	path := shared.Path(t)
	r := recipe.Request{Mode: recipe.ModeLimit(2), Data: owner.New("test", []string{"x"}, recipe.ModeLimit(2)).Encode()}
	for range 2 {
		l, err := recipe.Acquire(shared.Ctx(t, 10*time.Second), shared.Client(t), path, r)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(shared.Ctx(t, 5*time.Second))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		c := shared.Client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := recipe.Acquire(ctx, c, path, r)
			errs <- err
		}()
	}
	defer func() {
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("a waiter: %v", err)
			}
		}
	}()
	conn := shared.Raw(t)
	zktest.Eventually(t, 10*time.Second, "a lease beyond the limit and a waiter at the mutex", func() bool {
		leases, _, err1 := conn.Children(path + "/leases")
		locks, _, err2 := conn.Children(path + "/locks")
		return err1 == nil && err2 == nil && len(leases) == 3 && len(locks) == 2
	})
	tree, err := Read(shared.Ctx(t, 5*time.Second), shared.Client(t), path[:len(path)-len("/lock")])
	if err != nil || len(tree.Queues) != 1 {
		t.Fatalf("Read = %+v, %v", tree, err)
	}
	q := tree.Queues[0]
	if q.Path != path || q.Recipe != recipe.RecipeSemaphore || q.Limit != 2 || len(q.Entries) != 4 {
		t.Fatalf("semaphore queue = %+v", q)
	}
	for i, e := range q.Entries {
		wantUnder, wantHolding := "leases", i < 2
		if i == 3 {
			wantUnder = "locks"
		}
		if e.Path != path || e.Under != wantUnder || e.Holding != wantHolding || e.Position != i+1 || e.Limit != 2 {
			t.Errorf("entry %d = %+v", i, e)
		}
	}
	hs, err := recipe.Holders(shared.Ctx(t, 5*time.Second), shared.Client(t), path)
	if err != nil || len(hs) != 2 || hs[0].Path != path || hs[0].Under != "leases" {
		t.Errorf("Holders = %+v, %v", hs, err)
	}
}

// TestReadPersistentContender: a sequential child in a contender's
// shape that belongs to no session is listed as what it is: a contender
// that holds (or waits) and never expires.
func TestReadPersistentContender(t *testing.T) {
	path := shared.Path(t)
	conn := shared.Raw(t)
	acl := zk.WorldACL(zk.PermAll)
	dir := path[:len(path)-len("/lock")]
	for _, p := range []string{dir, path} {
		if _, err := conn.CreateContainer(p, nil, zk.FlagContainer, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	stuck, err := conn.Create(path+"/_c_11111111-2222-4333-8444-555555555555-lock-", []byte("left"), zk.FlagSequence, acl)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Delete(stuck, -1)
	tree, err := Read(shared.Ctx(t, 5*time.Second), shared.Client(t), dir)
	if err != nil || len(tree.Queues) != 1 || len(tree.Queues[0].Entries) != 1 {
		t.Fatalf("Read = %+v, %v", tree, err)
	}
	if e := tree.Queues[0].Entries[0]; e.Session != 0 || !e.Holding || string(e.Data) != "left" {
		t.Errorf("persistent contender = %+v", e)
	}
}

func TestMain(m *testing.M) { shared.Main(m) }
