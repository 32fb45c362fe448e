package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

// The examples run against the test binary's ZooKeeper server (under
// go test -short they are skipped: see TestMain). A service connects to
// its ensemble instead, e.g. with "zk1:2181,zk2:2181,zk3:2181/app".

// connect opens a session with the test's server, as Example shows.
func connect() *zkconn.Client {
	servers, err := shared.ConnectString()
	if err != nil {
		log.Fatal(err)
	}
	cs, err := zkconn.ParseConnString(servers)
	if err != nil {
		log.Fatal(err)
	}
	c, err := zkconn.Dial(context.Background(), zkconn.Options{ConnString: cs, SessionTimeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// A mutex: the lock alone, waited for at most a minute. Curator's
// InterProcessMutex on the same path waits for it, and it for Curator.
func Example() {
	ctx := context.Background()
	servers, err := shared.ConnectString() // e.g. "zk1:2181,zk2:2181,zk3:2181/app"
	if err != nil {
		log.Fatal(err)
	}
	cs, err := zkconn.ParseConnString(servers)
	if err != nil {
		log.Fatal(err)
	}
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	l, err := recipe.Acquire(ctx, c, "/examples/report", recipe.Request{Wait: recipe.WaitUntil(time.Now().Add(time.Minute))})
	if errors.Is(err, recipe.ErrWaitTimeout) {
		fmt.Println("someone else held it for a minute")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	token, err := l.FencingToken(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Pass the token with every write to what the lock protects.
	fmt.Println("holding", l.Path, "with a fencing token:", token > 0)
	// Output: holding /examples/report with a fencing token: true
}

// A read-write lock: readers hold it together, a writer alone. With
// FlavorCuratorRW the nodes are those of Curator's
// InterProcessReadWriteLock; with FlavorKazoo, Kazoo's ReadLock and
// WriteLock.
func ExampleModeShared() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	read := recipe.Request{Mode: recipe.ModeShared, Flavor: recipe.FlavorCuratorRW}
	r1, err := recipe.Acquire(ctx, c, "/examples/catalog", read)
	if err != nil {
		log.Fatal(err)
	}
	r2, err := recipe.Acquire(ctx, c, "/examples/catalog", read)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("two readers hold it")

	write := recipe.Request{Mode: recipe.ModeExclusive, Flavor: recipe.FlavorCuratorRW, Wait: recipe.NoWait}
	_, err = recipe.Acquire(ctx, c, "/examples/catalog", write)
	var busy *recipe.BusyError
	fmt.Println("a writer is busy:", errors.As(err, &busy))

	r1.Release(ctx)
	r2.Release(ctx)
	w, err := recipe.Acquire(ctx, c, "/examples/catalog", write)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the writer holds it alone")
	w.Release(ctx)
	// Output:
	// two readers hold it
	// a writer is busy: true
	// the writer holds it alone
}

// A semaphore: at most two holders, laid out as Curator's
// InterProcessSemaphoreV2 with two leases.
func ExampleModeLimit() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	r := recipe.Request{Mode: recipe.ModeLimit(2)}
	var leases []*recipe.Lease
	for range 2 {
		l, err := recipe.Acquire(ctx, c, "/examples/encoders", r)
		if err != nil {
			log.Fatal(err)
		}
		leases = append(leases, l)
	}
	r.Wait = recipe.NoWait
	_, err := recipe.Acquire(ctx, c, "/examples/encoders", r)
	var busy *recipe.BusyError
	if errors.As(err, &busy) {
		fmt.Printf("a third is busy: all %d leases are taken\n", busy.Limit)
	}
	for _, l := range leases {
		l.Release(ctx)
	}
	// Output: a third is busy: all 2 leases are taken
}

// Several locks at once: taken in sorted order, so that two services that
// need the same locks never wait for each other forever, with one deadline
// for them all, and given back in reverse order. Curator's
// InterProcessMultiLock does the same.
func Example_severalPaths() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	paths := []string{"/examples/db", "/examples/cache"}
	sort.Strings(paths)
	wait := recipe.WaitUntil(time.Now().Add(time.Minute))
	var held []*recipe.Lease
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].Release(ctx)
		}
	}
	defer release()
	for _, p := range paths {
		l, err := recipe.Acquire(ctx, c, p, recipe.Request{Wait: wait})
		if err != nil {
			log.Fatal(err) // the deferred release gives back what was taken
		}
		held = append(held, l)
	}
	fmt.Println("holding", len(held), "locks, the first", held[0].Path)
	// Output: holding 2 locks, the first /examples/cache
}

// Revocation, Curator's way: Revoke asks the holder to give up the lock,
// and the holder hears it on Lease.Revoked, stops its work and releases.
// A zklock holder, and a Curator lock made revocable, do the same; so a Go
// service can stop them, and they it.
func ExampleRevoke() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	l, err := recipe.Acquire(ctx, c, "/examples/reindex", recipe.Request{})
	if err != nil {
		log.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { // the holder's work
		defer close(stopped)
		select {
		case r := <-l.Revoked():
			fmt.Println("asked to stop:", r.Path)
		case <-l.Done():
			fmt.Println("lost:", l.Err())
		}
		l.Release(ctx)
	}()

	// Elsewhere, an operator's tool:
	if _, err := recipe.Revoke(ctx, c, "/examples/reindex", "", recipe.Requester()); err != nil {
		log.Fatal(err)
	}
	<-stopped
	// Output: asked to stop: /examples/reindex
}

// A waiter asked to leave the queue gives up at once, with a
// *RevokedError from Acquire.
func ExampleRevoke_waiter() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	holder, err := recipe.Acquire(ctx, c, "/examples/deploy", recipe.Request{})
	if err != nil {
		log.Fatal(err)
	}
	defer holder.Release(ctx)

	waiting := make(chan string, 1)
	result := make(chan error, 1)
	go func() {
		_, err := recipe.Acquire(ctx, c, "/examples/deploy", recipe.Request{
			OnWait: func(w recipe.Waiting) { // called each time it starts to wait
				select {
				case waiting <- w.Node:
				default:
				}
			},
		})
		result <- err
	}()
	node := <-waiting
	done, err := recipe.Revoke(ctx, c, "/examples/deploy", node, recipe.Requester())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("asked:", len(done.Asked))
	err = <-result
	var revoked *recipe.RevokedError
	fmt.Println("the waiter gave up:", errors.As(err, &revoked))
	// Output:
	// asked: 1
	// the waiter gave up: true
}

// A lease's loss signal: Done is closed once the lease can no longer be
// trusted, and Err says why (here an operator deleted the node).
func ExampleLease_Done() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	l, err := recipe.Acquire(ctx, c, "/examples/singleton", recipe.Request{})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	work := time.NewTicker(10 * time.Millisecond)
	defer work.Stop()

	if err := c.Delete(ctx, l.Node); err != nil { // what an operator's deleteall does
		log.Fatal(err)
	}
	for {
		select {
		case <-work.C:
			// ... a step of the work the lock guards ...
		case <-l.Done():
			fmt.Println("stopped: node gone:", errors.Is(l.Err(), recipe.ErrNodeGone))
			return
		}
	}
	// Output: stopped: node gone: true
}

// The queue, as Curator's getParticipantNodes and Kazoo's contenders read
// it: who holds the lock and who waits, in order.
func ExampleInspect() {
	ctx := context.Background()
	c := connect()
	defer c.Close()
	holder, err := recipe.Acquire(ctx, c, "/examples/backup", recipe.Request{Data: []byte("backup-host-1")})
	if err != nil {
		log.Fatal(err)
	}
	defer holder.Release(ctx)
	q, err := recipe.Inspect(ctx, c, "/examples/backup")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range q.Entries {
		fmt.Println(e.Position, e.Holding, string(e.Data), e.Flavor)
	}
	// Output: 1 true backup-host-1 curator
}
