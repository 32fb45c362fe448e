package lock_test

// These examples are compiled by go test, not run: they need an ensemble.
// Each is a program a service can start from as it is.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/zkconn"
)

// connect opens the session that every lease of the process shares, as
// etcd's concurrency.NewSession does: one per process, closed on exit
// (which releases whatever it still holds).
func connect(ctx context.Context) *zkconn.Client {
	cs, err := zkconn.ParseConnString("zk1:2181,zk2:2181,zk3:2181/app")
	if err != nil {
		log.Fatal(err)
	}
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// A mutex, waited for at most a minute, its fencing token passed to the
// store it protects, and work that stops when the lease is lost.
func Example() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	l, err := lock.Acquire(ctx, c, "/locks/report", lock.Request{
		Wait: lock.WaitUntil(time.Now().Add(time.Minute)),
		Data: []byte("report-generator on host-1"),
	})
	if errors.Is(err, lock.ErrWaitTimeout) {
		log.Fatal("someone else is making the report")
	}
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	token, err := l.FencingToken(ctx)
	if err != nil {
		log.Fatal(err)
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-l.Done(): // the lock may have passed to another holder
			log.Printf("lock lost: %v", l.Err())
			stop()
		case <-work.Done():
		}
	}()
	writeReport(work, token)
}

// writeReport stands for the work the lock protects; the store refuses a
// token older than one it has seen.
func writeReport(ctx context.Context, token int64) { _, _ = ctx, token }

// A try: take the lock if it is free, else say who holds it.
func ExampleBusyError() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	l, err := lock.Acquire(ctx, c, "/locks/report", lock.Request{Wait: lock.NoWait})
	var busy *lock.BusyError
	if errors.As(err, &busy) {
		fmt.Printf("busy: held by %s (%s)\n", busy.Holder, busy.Data)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
}

// A semaphore: at most three holders of /locks/encoders at once.
func ExampleSemaphore() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	l, err := lock.Acquire(ctx, c, "/locks/encoders", lock.Request{Mode: lock.Semaphore(3)})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
}

// A read-write lock: readers share it, a writer holds it alone. Both
// sides name their nodes as Curator's InterProcessReadWriteLock does.
func ExampleShared() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	r, err := lock.Acquire(ctx, c, "/locks/catalog", lock.Request{Mode: lock.Shared, Flavor: lock.FlavorCuratorRW})
	if err != nil {
		log.Fatal(err)
	}
	// read …
	if err := r.Release(ctx); err != nil {
		log.Fatal(err)
	}

	w, err := lock.Acquire(ctx, c, "/locks/catalog", lock.Request{Mode: lock.Exclusive, Flavor: lock.FlavorCuratorRW})
	if err != nil {
		log.Fatal(err)
	}
	// write …
	if err := w.Release(ctx); err != nil {
		log.Fatal(err)
	}
}

// Several locks, taken in sorted order under one deadline and released
// together.
func ExampleAcquireAll() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	ls, err := lock.AcquireAll(ctx, c, []string{"/locks/accounts/7", "/locks/accounts/3"},
		lock.Request{Wait: lock.WaitUntil(time.Now().Add(30 * time.Second))})
	if err != nil {
		log.Fatal(err)
	}
	defer ls.Release(ctx)
	// move money between accounts 3 and 7 …
}

// A holder that gives the lock up when asked to.
func ExampleLease_Revoked() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	l, err := lock.Acquire(ctx, c, "/locks/leader", lock.Request{})
	if err != nil {
		log.Fatal(err)
	}
	select {
	case r := <-l.Revoked():
		log.Printf("%v: stepping down", r)
	case <-l.Done():
		log.Printf("lost: %v", l.Err())
	}
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}
}

// Who holds a lock and who waits; and asking its holder to let go.
func ExampleInspect() {
	ctx := context.Background()
	c := connect(ctx)
	defer c.Close()

	q, err := lock.Inspect(ctx, c, "/locks/leader")
	if err != nil {
		log.Fatal(err)
	}
	for _, ct := range q.Contenders {
		fmt.Printf("%d %s holding=%v since %s: %s\n", ct.Position, ct.Mode, ct.Holding, ct.Created.Format(time.RFC3339), ct.Data)
	}
	asked, err := lock.Revoke(ctx, c, "/locks/leader", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("asked", asked)
}
