package runner

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// EnvResources names, for a pool, the members the command holds: their
// names separated by commas, sorted, so that a script that took several
// can split it the same way every time.
const EnvResources = "ZKLOCK_RESOURCES"

// lockPool takes o.Pool's members under the one pool path. The members'
// leases are ordinary locks, so the guard, revocation and release treat
// them as the locks of several paths.
func (o *Options) lockPool(ctx context.Context, client *zkconn.Client, paths []string, r recipe.Request, pw *progressWatch) ([]*recipe.Lease, string, error) {
	path := paths[0]
	began := time.Now()
	leases, err := o.acquireOne(ctx, client, path, r, pw, func(lctx context.Context, r recipe.Request) ([]*recipe.Lease, error) {
		return recipe.AcquirePool(lctx, client, path, *o.Pool, r)
	})
	if err != nil {
		return nil, path, err
	}
	o.heldSince = time.Now()
	for _, l := range leases {
		o.reportAcquired(ctx, client, l, time.Since(began), recipe.PoolMember(path, l))
	}
	return leases, "", nil
}

// resources names the pool members that leases hold, or nothing without
// a pool.
func (o *Options) resources(leases []*recipe.Lease) []string {
	if o.Pool == nil || len(o.Paths) == 0 {
		return nil
	}
	var out []string
	for _, l := range leases {
		out = append(out, recipe.PoolMember(o.Paths[0], l))
	}
	return out
}
