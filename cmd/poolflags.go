package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
)

// resourcesValue is --resources: the members of a pool, comma-separated.
// Each must be a node name under the path, so a bad list fails at parse
// time, before zklock connects.
type resourcesValue []string

func (r *resourcesValue) String() string { return strings.Join(*r, ",") }
func (r *resourcesValue) Type() string   { return "A,B,..." }

func (r *resourcesValue) Set(s string) error {
	if len(*r) > 0 {
		// A second list would replace the first, silently dropping
		// members the operator named.
		return errors.New("given twice: list every member in one --resources, comma-separated")
	}
	members := strings.Split(s, ",")
	// Take 1 is always in range: only the names are checked here.
	if err := (recipe.Pool{Members: members, Take: 1}).Validate(); err != nil {
		// The flag's name says what is bad: the rest is the reason.
		return errors.New(strings.TrimPrefix(err.Error(), recipe.ErrBadPool.Error()+": "))
	}
	for _, m := range members {
		// The member's node would stand where --once-per and
		// --order-key keep the pool path's success record, and pass
		// for a recent success.
		if m == success.NodeName {
			return fmt.Errorf("member %q is the name of the pool path's success record", m)
		}
	}
	*r = members
	return nil
}

// pool turns --resources and --take into the pool to take, or nil for a
// plain lock, refusing what does not combine with a pool.
func (o *runOptions) pool() (*recipe.Pool, error) {
	if len(o.Resources) == 0 {
		if o.Take > 0 {
			return nil, usageErrorf("--take counts members of a pool: add --resources")
		}
		return nil, nil
	}
	take := max(int(o.Take), 1)
	switch {
	case len(o.Paths) > 1:
		return nil, usageErrorf("--resources names the members under one pool path: give one --path")
	case o.Shared || o.Limit > 0:
		return nil, usageErrorf("--resources takes members exclusively: drop --shared and --limit")
	case o.Supersede || o.Cancel:
		return nil, usageErrorf("--resources queues in arrival order: drop --supersede and --cancel-in-progress")
	case o.OrderKey.key != nil:
		// The key is recorded per lock path on success, and a pool's
		// jobs deploy to different members: one member's success must
		// not make another member's older job outdated.
		return nil, usageErrorf("--order-key records a success per lock path, not per pool member: drop --order-key")
	case o.OncePer > 0:
		return nil, usageErrorf("--once-per records a success per lock path, not per pool member: drop --once-per")
	case take > len(o.Resources):
		members := "members"
		if len(o.Resources) == 1 {
			members = "member"
		}
		return nil, usageErrorf("--take %d is more than the %d %s of --resources", take, len(o.Resources), members)
	}
	return &recipe.Pool{Members: o.Resources, Take: take}, nil
}
