package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// ErrEphemeralParent means the lock path, or one of its parents, is an
// ephemeral node, which cannot have children.
var ErrEphemeralParent = errors.New("parent is an ephemeral node")

// ensurePath creates the lock path and any missing parents as container
// nodes, top-down, so that the server removes them again once they are empty
// and lock paths leave no garbage behind (persistent ones when the client
// protects its lock paths: zkconn.Client.CreatePathNode). It is only called
// after a create failed with NoNode: the common case pays no extra round
// trips. It appends the nodes it created to made, also on error.
func ensurePath(ctx context.Context, c *zkconn.Client, path string, made *[]string) error {
	p := ""
	for _, comp := range strings.Split(path[1:], "/") {
		p += "/" + comp
		open := p != path
		err := c.CreatePathNode(ctx, p, open)
		switch {
		case err == nil:
			*made = append(*made, p)
		case errors.Is(err, zk.ErrNodeExists):
		case errors.Is(err, zk.ErrNoNode) && p == "/"+comp && c.Chroot() != "":
			// The chroot itself is missing.
			if err := c.EnsureChroot(ctx); err != nil {
				return err
			}
			if err := c.CreatePathNode(ctx, p, open); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
		case errors.Is(err, zk.ErrNoChildrenForEphemerals):
			return fmt.Errorf("%w: cannot create %s", ErrEphemeralParent, p)
		default:
			// NoNode here means a container above was reaped between two
			// calls; the caller retries the whole walk.
			return err
		}
	}
	return nil
}

// removeEmpty deletes the containers in made, deepest first, after the
// create they were made for failed: the server reaps a container only once
// it has had a child, so one that never had any would stay forever. A
// container that another contender has meanwhile used is not empty, and
// the delete leaves it alone.
func removeEmpty(c *zkconn.Client, made []string) {
	if len(made) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for i := len(made) - 1; i >= 0; i-- {
		if err := c.Delete(ctx, made[i]); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return // not empty, or unreachable: the ones above are not empty either
		}
	}
}
