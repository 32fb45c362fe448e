package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// Recipe is how a lock path's contenders are laid out. Clients of one
// recipe do not see the other's nodes, so a path must hold one recipe only.
type Recipe int

const (
	// RecipeLock is a mutex or a read-write lock: sequential children of
	// the lock path itself.
	RecipeLock Recipe = iota
	// RecipeSemaphore is Curator's InterProcessSemaphoreV2: a mutex under
	// <path>/locks and the leases under <path>/leases.
	RecipeSemaphore
	// RecipeSupersede is a mutex whose waiters give their place to newer
	// contenders (supersede.go): a plain contender there would be told to
	// leave, or wait behind a queue that empties for others.
	RecipeSupersede
)

func (r Recipe) String() string {
	switch r {
	case RecipeSemaphore:
		return "a semaphore"
	case RecipeSupersede:
		return "a superseding queue"
	}
	return "a lock"
}

// KindConflictError means the lock path holds contenders of the other
// recipe. Joining would not exclude them, so zklock refuses, and has backed
// out of the queue when it returns this.
type KindConflictError struct {
	Path  string
	Want  Recipe // what this contender asked for
	Found Recipe // what the path holds
	Node  string // one node of the other recipe
	Limit int    // for a semaphore: its limit, when a zklock lease says so
}

func (e *KindConflictError) Error() string {
	return fmt.Sprintf("%s is used as %s (node %s), not as %s", e.Path, e.Found, e.Node, e.Want)
}

// lockContender finds a sequential child of path among children: a mutex
// or read-write contender, which a semaphore must not share the path with.
func lockContender(path string, children []string) *KindConflictError {
	for _, ch := range children {
		if _, ok := ParseContender(ch); ok {
			return &KindConflictError{Path: path, Want: RecipeSemaphore, Found: RecipeLock, Node: zkconn.Join(path, ch)}
		}
	}
	return nil
}

// semaphoreNode looks for a semaphore's nodes under path, given path's
// children: a node under <path>/locks or <path>/leases. Only paths that
// have such children cost requests; empty leftover containers are no
// conflict.
//
// The order matters. A semaphore contender creates its mutex node under
// locks, checks path, creates its lease, and only then deletes the mutex
// node. So if the mutex node is already gone when we list locks, the lease
// was created before we list leases, and we see it there. Listing leases
// first could miss both: the lease not yet made, the mutex node gone by the
// time we look. And both are listed when either name is a child of path,
// since the leases container may not have existed when path was listed.
func semaphoreNode(ctx context.Context, c *zkconn.Client, path string, children []string) (*KindConflictError, error) {
	present := false
	for _, ch := range children {
		present = present || ch == semLocks || ch == semLeases
	}
	if !present {
		return nil, nil
	}
	for _, sub := range []string{semLocks, semLeases} {
		dir := zkconn.Join(path, sub)
		nodes, err := c.Children(ctx, dir)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if _, ok := ParseContender(n); !ok {
				continue
			}
			e := &KindConflictError{Path: path, Want: RecipeLock, Found: RecipeSemaphore, Node: zkconn.Join(dir, n)}
			if sub == semLeases {
				if data, _, err := c.Get(ctx, e.Node); err == nil {
					if d, ok := declaration(data); ok {
						e.Limit = d.Limit
					}
				}
			}
			return e, nil
		}
	}
	return nil, nil
}

// checkNoLocks refuses a semaphore on a path that holds lock contenders.
func checkNoLocks(ctx context.Context, c *zkconn.Client, path string) error {
	children, err := c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	if e := lockContender(path, children); e != nil {
		return e
	}
	return nil
}
