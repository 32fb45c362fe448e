package recipe

import (
	"errors"
	"fmt"
)

// ErrFlavorConflict is what every *FlavorConflictError is.
var ErrFlavorConflict = errors.New("lock flavor conflict")

// FlavorConflictError means another client library's contenders on the lock
// path cannot see nodes named the way zklock was asked to name its own, so
// running would not exclude them. zklock refuses rather than run unsafely,
// and has backed out of the queue when it returns this.
type FlavorConflictError struct {
	Path  string
	Node  string // the other library's contender
	Other string // that library, e.g. "a Kazoo Lock/ReadLock/WriteLock"
	Names string // the names zklock was asked to create
	// Flavor is the flavor that would share the path with Other, or ""
	// if none does.
	Flavor Flavor
}

func (e *FlavorConflictError) Error() string {
	return fmt.Sprintf("%v: %s is used by %s (node %s), which cannot see zklock's %s nodes",
		ErrFlavorConflict, e.Path, e.Other, e.Node, e.Names)
}

func (e *FlavorConflictError) Is(target error) bool { return target == ErrFlavorConflict }

// ErrLimitMismatch means the holders of a semaphore disagree on its limit.
var ErrLimitMismatch = errors.New("semaphore limit mismatch")

// LimitMismatchError is a semaphore held by a zklock that declared another
// limit than this request's.
type LimitMismatchError struct {
	Path   string
	Held   int       // the limit the holder declared
	Holder Contender // the holder's lease
	Data   []byte    // what the holder's lease says of it
	Want   int       // this request's limit
}

func (e *LimitMismatchError) Error() string {
	return fmt.Sprintf("%v: %s is held with a limit of %d by node %s; this request has a limit of %d",
		ErrLimitMismatch, e.Path, e.Held, e.Holder.Name, e.Want)
}

func (e *LimitMismatchError) Is(target error) bool { return target == ErrLimitMismatch }

// BusyError is returned by a NoWait acquisition when someone else holds the
// lock. Its message names the holder's node only: the caller describes the
// holder from Data as it sees fit.
type BusyError struct {
	Path   string
	Holder Contender
	Data   []byte // what the holder's node says of it
	// Unread is why Data could not be read, nil when it was:
	// zk.ErrNoNode when the holder had left by then (the lock changing
	// hands faster than a try could look), or the read's error. Empty
	// Data then says nothing of who the holder was.
	Unread error
	Limit  int // for a semaphore: how many leases there are, all taken
	// Pool, for a member of a pool, says how the pool fell short; Path and
	// Holder are then the first busy member's. Nil for a lock of its own.
	Pool *PoolShortage
}

// PoolShortage is why a pool could not be taken without waiting.
type PoolShortage struct {
	Path string // the pool's
	Take int    // members asked for
	Free int    // members that were free
	Size int    // members in the pool
	// Queued is true when the contender ahead was another in the pool's
	// queue, not the holder of a member: Path and Holder are then the
	// queue's.
	Queued bool
}

func (e *BusyError) Error() string {
	switch p := e.Pool; {
	case p != nil && p.Queued:
		return fmt.Sprintf("pool %s is busy: node %s is ahead in its queue", p.Path, e.Holder.Name)
	case p != nil:
		return fmt.Sprintf("pool %s is busy: %d of its %d members free, %d needed; %s is held by node %s", p.Path, p.Free, p.Size, p.Take, e.Path, e.Holder.Name)
	}
	if e.Limit > 0 {
		return fmt.Sprintf("%s is busy: all %d leases are taken, the first by node %s", e.Path, e.Limit, e.Holder.Name)
	}
	return fmt.Sprintf("%s is busy: held by node %s", e.Path, e.Holder.Name)
}
