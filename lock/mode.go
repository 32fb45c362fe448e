package lock

import (
	"time"

	"github.com/zklock/zklock/internal/recipe"
)

// Mode is what a request asks to hold: the lock alone (Exclusive), a share
// of it with other readers (Shared), or one of a semaphore's leases
// (Semaphore). The zero Mode is Exclusive.
type Mode struct {
	kind  kind
	limit int // a semaphore's
}

// kind is a Mode's own, so that the API shows none of the recipes' names.
type kind int

const (
	exclusive kind = iota
	shared
	semaphore
)

var (
	// Exclusive is a mutex, or the write side of a read-write lock.
	Exclusive = Mode{kind: exclusive}
	// Shared is the read side of a read-write lock.
	Shared = Mode{kind: shared}
)

func (m Mode) recipe() recipe.Mode {
	switch m.kind {
	case shared:
		return recipe.ModeShared
	case semaphore:
		return recipe.ModeLimit(m.limit)
	}
	return recipe.ModeExclusive
}

func modeOf(m recipe.Mode) Mode {
	switch m.Kind() {
	case recipe.Shared:
		return Shared
	case recipe.SemaphoreLease:
		return Semaphore(m.Limit())
	}
	return Exclusive
}

// Semaphore is one of limit leases on a path: at most limit holders at
// once. Every holder must ask for the same limit (else a
// *LimitMismatchError); a limit below 1 is refused by Acquire.
func Semaphore(limit int) Mode { return Mode{kind: semaphore, limit: limit} }

// Limit is a semaphore's limit, 0 for a lock.
func (m Mode) Limit() int { return m.limit }

// String is "exclusive", "shared" or "semaphore".
func (m Mode) String() string {
	switch m.kind {
	case shared:
		return "shared"
	case semaphore:
		return "semaphore"
	}
	return "exclusive"
}

// Flavor is how the nodes a request creates are named, so that clients of
// another library on the same path see them. Whatever the flavor, this
// package sees every library's contenders.
type Flavor int

const (
	// FlavorCurator is Apache Curator's naming, and the default. Curator's
	// InterProcessMutex sees its exclusive nodes, its
	// InterProcessReadWriteLock its shared nodes; readers do not see its
	// exclusive nodes, so a read-write lock's writers take FlavorCuratorRW.
	FlavorCurator Flavor = iota
	// FlavorCuratorRW is Curator InterProcessReadWriteLock's naming for
	// writers as well as readers.
	FlavorCuratorRW
	// FlavorKazoo is Kazoo's naming (Lock, ReadLock and WriteLock).
	FlavorKazoo
)

func (f Flavor) recipe() recipe.Flavor {
	switch f {
	case FlavorCuratorRW:
		return recipe.FlavorCuratorRW
	case FlavorKazoo:
		return recipe.FlavorKazoo
	}
	return recipe.FlavorCurator
}

// Wait is how long Acquire waits for a lock that is not free: for as long
// as the context lives (the zero Wait), not at all (NoWait) or until a
// deadline (WaitUntil). A lock that is free when Acquire looks is taken
// whatever the wait: a deadline ends waiting, never taking.
type Wait struct {
	noWait   bool
	deadline time.Time // zero: none
}

// NoWait gives up at once, with a *BusyError, if the lock is not free.
var NoWait = Wait{noWait: true}

// WaitUntil waits until deadline, then gives up with an error wrapping
// ErrWaitTimeout. One deadline serves AcquireAll's paths together.
func WaitUntil(deadline time.Time) Wait { return Wait{deadline: deadline} }

func (w Wait) recipe() recipe.Wait {
	switch {
	case w.noWait:
		return recipe.NoWait
	case !w.deadline.IsZero():
		return recipe.WaitUntil(w.deadline)
	}
	return recipe.WaitForever
}
