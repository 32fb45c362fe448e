package recipe

import (
	"path"

	"github.com/zklock/zklock/zkconn"
)

// In a tree of locks, a semaphore's nodes are two queues below its path:
// its leases and its mutex. People and scripts ask about the semaphore, so
// a listing shows it as one queue at its own path.

// Semaphores replaces each semaphore's <path>/leases and <path>/locks
// queues by one queue at <path>. A locks queue belongs to a semaphore when
// the leases queue beside it does, or when zklock wrote its contenders as
// semaphore contenders (a queue for the mutex while no lease exists).
func Semaphores(qs []Queue) []Queue {
	byPath := make(map[string]int, len(qs))
	for i, q := range qs {
		byPath[q.Path] = i
	}
	merged := make(map[int]bool)
	var out []Queue
	for i, q := range qs {
		base := path.Base(q.Path)
		if merged[i] || q.Path == "/" || (base != semLeases && base != semLocks) {
			continue
		}
		sem := path.Dir(q.Path)
		leases, locks := Queue{}, Queue{}
		li, hasLeases := byPath[zkconn.Join(sem, semLeases)]
		if hasLeases && isLeaseQueue(qs[li]) {
			leases = qs[li]
			merged[li] = true
		}
		mi, hasLocks := byPath[zkconn.Join(sem, semLocks)]
		if hasLocks && (leases.Path != "" || isSemaphoreMutex(qs[mi])) {
			locks = qs[mi]
			merged[mi] = true
		}
		if leases.Path != "" || locks.Path != "" {
			out = append(out, semaphoreQueue(sem, leases, locks))
		}
	}
	for i, q := range qs {
		if !merged[i] {
			out = append(out, q)
		}
	}
	return out
}

func isLeaseQueue(q Queue) bool {
	return len(q.Entries) > 0 && q.Entries[0].Kind == SemaphoreLease
}

func isSemaphoreMutex(q Queue) bool {
	for _, e := range q.Entries {
		if d, ok := declaration(e.Data); ok && d.Limit > 0 {
			return true
		}
	}
	return false
}

// semaphoreQueue makes one queue at path from a semaphore's leases and its
// mutex's queue. The mutex's holder is on its way to a lease (or already
// has one beyond the limit, which is listed): its contender, and those of
// every other session that has a lease, are not shown twice.
func semaphoreQueue(path string, leases, locks Queue) Queue {
	q := Queue{Path: path, Recipe: RecipeSemaphore}
	sessions := make(map[int64]bool)
	for _, e := range leases.Entries {
		if e.Limit > 0 {
			q.Limit = e.Limit
		}
		if e.Session != 0 {
			sessions[e.Session] = true
		}
		e.Under = semLeases
		q.Entries = append(q.Entries, e)
	}
	if q.Limit == 0 {
		for _, e := range locks.Entries {
			if d, ok := declaration(e.Data); ok && d.Limit > 0 {
				q.Limit = d.Limit
			}
		}
	}
	for _, e := range locks.Entries {
		if e.Session != 0 && sessions[e.Session] {
			continue
		}
		e.Under, e.Holding, e.Limit = semLocks, false, q.Limit
		q.Entries = append(q.Entries, e)
	}
	for i := range q.Entries {
		q.Entries[i].Path = path
		q.Entries[i].Position = i + 1
	}
	return q
}
