package lock

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// Queue is a lock path and its contenders in order: the holders first.
type Queue struct {
	Path string
	// Semaphore: the path holds a semaphore's leases and their waiters,
	// not a lock's contenders.
	Semaphore  bool
	Contenders []Contender
}

// Contender is one holder or waiter of a lock path, whichever library's.
type Contender struct {
	Node     string // its node's full path
	Position int    // its 1-based place in the queue
	Holding  bool   // holds the lock now
	// Mode is what it asks for; a semaphore lease's limit is known when
	// its holder wrote it (a zklock does), else 0.
	Mode    Mode
	Data    []byte    // what its client wrote into the node
	Created time.Time // when it joined, on the server's clock
	Session int64     // the session that owns it
	// Revoke is a request that it give up its place, not yet acted on.
	Revoke Revocation
}

// Inspect reads who holds the lock at path and who waits, with each
// contender's data. A path that does not exist is an empty queue.
func Inspect(ctx context.Context, c *zkconn.Client, path string) (Queue, error) {
	q, err := recipe.Inspect(ctx, c, path)
	if err != nil {
		return Queue{}, public(err)
	}
	out := Queue{Path: q.Path, Semaphore: q.Recipe == recipe.RecipeSemaphore}
	for _, e := range q.Entries {
		m := Exclusive
		switch {
		case out.Semaphore:
			// A contender still queued for the semaphore's mutex waits
			// for a lease as much as one beyond the limit does.
			m = Semaphore(max(e.Limit, q.Limit))
		case e.Kind == recipe.Shared:
			m = Shared
		}
		out.Contenders = append(out.Contenders, Contender{
			Node: e.Node(), Position: e.Position, Holding: e.Holding, Mode: m,
			Data: e.Data, Created: e.Created, Session: e.Session, Revoke: revocation(e.Revoke),
		})
	}
	return out, nil
}
