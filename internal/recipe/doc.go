// Package recipe holds zklock's ZooKeeper lock recipes, which
// interoperate with Apache Curator (Java), Kazoo (Python) and other
// zklocks: a zklock job, a Curator service or a Kazoo script that lock the
// same path exclude each other.
//
// It is internal: package lock is the API a Go service uses, a small
// facade over these recipes. What only the zklock command needs (the
// acquisition record, the read-back for list, the hooks its progress
// lines hang on) stays here, free to change with the command.
//
// Every blocking call takes a context. On every failure after joining the
// queue (a timeout, a cancelled context, an error) Acquire deletes its node
// before it returns, so nothing is left behind. Lock paths and their
// missing parents are created as container nodes, which the server reaps
// once they are empty.
//
// # Recipes, and their counterparts
//
// Each recipe lays out its nodes as the counterpart does, so both see each
// other on one path:
//
//   - Mutex: Acquire with ModeExclusive (the zero Request). Curator's
//     InterProcessMutex (nodes _c_<uuid>-lock-<seq>); with FlavorKazoo,
//     Kazoo's Lock (<hex>__lock__<seq>).
//   - Read-write lock: ModeShared for a reader, ModeExclusive for a
//     writer. With FlavorCuratorRW, Curator's InterProcessReadWriteLock
//     (readLock and writeLock: __READ__ and __WRIT__ nodes); with
//     FlavorKazoo, Kazoo's ReadLock and WriteLock (2.9.0 or later).
//   - Semaphore: ModeLimit(n), at most n holders. Curator's
//     InterProcessSemaphoreV2 (a mutex under <path>/locks, the leases
//     under <path>/leases). Kazoo's Semaphore lays out its nodes
//     otherwise, and cannot share a path with it.
//   - Several locks: Acquire each path in sorted order, with one
//     WaitUntil deadline for all, and release in reverse order. Curator's
//     InterProcessMultiLock; Kazoo has none.
//   - Revocation: Revoke asks a holder or a waiter to give up its place,
//     as Curator's Revoker.attemptRevoke does: it writes __REVOKE__ into
//     the contender's node. A holder learns of it from Lease.Revoked (as a
//     Curator lock made revocable with makeRevocable does from its
//     listener), a waiter in Acquire gives up with a *RevokedError. Kazoo
//     has no revocation.
//   - The queue: Inspect and Holders read who waits and who holds, with
//     each contender's data, as Curator's getParticipantNodes and Kazoo's
//     contenders do.
//   - Fencing token: Lease.FencingToken, the node's creation zxid, grows
//     strictly from each holder of a path to the next.
//
// The waits are herd-free: a contender watches only the node it waits for,
// so a release wakes one waiter (a writer's release wakes the readers
// behind it, which all proceed). The order is by the server's sequence
// numbers, parsed as the signed 32-bit counter they are, so it survives the
// counter wrapping.
//
// # One kind of lock per path
//
// Clients of different recipes ignore each other's nodes, so a path must
// hold one recipe: Acquire refuses a semaphore on a path that holds lock
// contenders, and a lock on a path that holds a semaphore, with a
// *KindConflictError, after backing out of the queue. Curator's mutex does
// not see read-write nodes and Kazoo sees only its own names, so Acquire
// also refuses to add a node that another library's contenders on the path
// could not see (*FlavorConflictError).
//
// # When the lock is lost
//
// A lease lives as long as its session. When the session expires, or the
// node is deleted, the lock can pass to the next waiter while the holder
// still believes it holds it. Lease.Done is closed then, and Lease.Err says
// why, as etcd's concurrency.Session.Done does; Lease.Revoked delivers the
// requests to give the lock up (Curator's revocation). Pass the fencing
// token to what the lock protects, so that it can refuse a stale holder.
//
// # Reading many locks
//
// Inspect reads the queue of one lock path. A listing of a whole tree (as
// zklock list makes it) is built from Queued, ReadEntry, NewQueue and
// Semaphores, so that its reads can be pipelined on one connection;
// ContenderNames names a queue's contenders without reading their data.
//
// # The data in a node
//
// Request.Data is written into the contender's node for others to read
// (zklock writes JSON saying who it is; Curator writes the client's IP
// address, Kazoo its identifier). The recipes read three members of a
// zklock's JSON: "zklock" (the contender sees every library's names),
// "limit" (the semaphore limit its holder declared) and "revoke" (a
// revocation its holder goes on regardless of).
package recipe
