// Package lock is a library of ZooKeeper locks for Go services that
// interoperate with Apache Curator (Java), Kazoo (Python) and the zklock
// command: a Go service and a zklock job, a Curator service or a Kazoo
// script that lock the same path exclude each other.
//
// As in etcd's concurrency package, the session and the locks are
// separate: package zkconn owns the session (zkconn.Dial), and this
// package takes it, holds locks on it and gives them back. One session
// holds any number of leases; closing it releases them all.
//
//	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs})
//	…
//	l, err := lock.Acquire(ctx, c, "/locks/report", lock.Request{})
//	…
//	defer l.Release(ctx)
//
// Every blocking call takes a context. On every failure after joining the
// queue (a timeout, a cancelled context, an error) Acquire deletes its
// node before it returns, so nothing is left behind. Lock paths and their
// missing parents are created as container nodes, which the server reaps
// once they are empty.
//
// # What there is to take
//
//   - Exclusive: a mutex, or the writer of a read-write lock. Curator's
//     InterProcessMutex; with FlavorKazoo, Kazoo's Lock.
//   - Shared: a reader of a read-write lock. Curator's
//     InterProcessReadWriteLock (FlavorCuratorRW for its writers too);
//     with FlavorKazoo, Kazoo's ReadLock and WriteLock.
//   - Semaphore(n): one of n leases. Curator's InterProcessSemaphoreV2.
//   - Several paths: AcquireAll takes each in sorted order, as Curator's
//     InterProcessMultiLock does, and Leases.Release gives them back.
//
// A path holds one kind of queue: a semaphore and a lock on one path
// would not exclude each other, so Acquire refuses with a
// *KindConflictError; and another library's contenders that could not see
// the names asked for are refused with a *FlavorConflictError.
//
// # When the lock is lost
//
// A lease lives as long as its session and its node. When the session
// expires, or someone deletes the node, the lock can pass to the next
// waiter while the holder still believes it holds it. Lease.Done is closed
// then, and Lease.Err says why, as etcd's concurrency.Session.Done does.
// Pass Lease.FencingToken to what the lock protects, so that it can refuse
// a stale holder: it grows strictly from each holder of a path to the
// next.
//
// # Inspect and revoke
//
// Inspect reads who holds a path and who waits, in order, with the data
// each contender wrote (Request.Data). Revoke asks holders, or one named
// contender, to give up their places, as Curator's Revoker does; a holder
// hears it on Lease.Revoked and decides, a waiter in Acquire gives up
// with a *RevokedError.
//
// # Errors
//
// Errors are values of this package's types, or wrap its sentinels, for
// errors.Is and errors.As; a lost session is reported as zkconn reports it
// (zkconn.IsSessionLoss).
package lock
