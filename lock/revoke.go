package lock

import (
	"context"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// Revoke asks contenders of the lock at path to give up their places, as
// Curator's Revoker does: with node "" every holder, else the contender
// whose node that is (a full path, or its name under path), holder or
// waiter. It returns the nodes it asked; none means there was nobody to
// ask. Revocation is cooperative: a holder hears it on Lease.Revoked (a
// Curator lock made revocable on its listener), a waiter gives up; Kazoo
// clients have no revocation and are not asked.
func Revoke(ctx context.Context, c *zkconn.Client, path, node string) ([]string, error) {
	r, err := recipe.Revoke(ctx, c, path, node, recipe.Requester())
	var asked []string
	for _, e := range r.Asked {
		asked = append(asked, e.Node())
	}
	return asked, public(err)
}
