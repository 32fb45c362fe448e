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
// protects its lock paths: zkconn.Client.CreatePathNode). It is only called after a create
// failed with NoNode: the common case pays no extra round trips.
func ensurePath(ctx context.Context, c *zkconn.Client, path string) error {
	p := ""
	for _, comp := range strings.Split(path[1:], "/") {
		p += "/" + comp
		open := p != path
		err := c.CreatePathNode(ctx, p, open)
		switch {
		case err == nil, errors.Is(err, zk.ErrNodeExists):
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
