package zkconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrEphemeralParent means the lock path, or one of its parents, is an
// ephemeral node, which cannot have children.
var ErrEphemeralParent = errors.New("parent is an ephemeral node")

// MaxCreateAttempts bounds how often a create under a lock path is retried
// after NoNode: each retry means a parent container was reaped between two
// calls, which needs a release racing our join; more than a handful in a
// row means something else is deleting the path.
const MaxCreateAttempts = 8

// removeTimeout bounds RemoveEmpty, which runs on the way out of a failed
// create, when the caller's context may already be done.
const removeTimeout = 5 * time.Second

// EnsurePath creates the lock path and any missing parents as container
// nodes, top-down, so that the server removes them again once they are empty
// and lock paths leave no garbage behind (persistent ones when the client
// protects its lock paths: CreatePathNode). Call it only after a create
// failed with NoNode: the common case then pays no extra round trips. It
// appends the nodes it created to made, also on error.
func (c *Client) EnsurePath(ctx context.Context, path string, made *[]string) error {
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

// RemoveEmpty deletes the containers in made (by EnsurePath), deepest
// first, after the create they were made for failed: the server reaps a
// container only once it has had a child, so one that never had any would
// stay forever. A container that another contender has meanwhile used is
// not empty, and the delete leaves it alone.
func (c *Client) RemoveEmpty(made []string) {
	if len(made) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	for i := len(made) - 1; i >= 0; i-- {
		if err := c.Delete(ctx, made[i]); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return // not empty, or unreachable: the ones above are not empty either
		}
	}
}
