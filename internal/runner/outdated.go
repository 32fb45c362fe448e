package runner

import (
	"context"
	"fmt"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/zkconn"
)

// An order key (--order-key) is the number a pipeline already has: its run
// or build number, a commit's timestamp. Runs must succeed in its order, or
// a slow older pipeline deploys over a newer one (GitLab's "prevent
// outdated deployment jobs"). The success record that --once-per keeps
// carries the key of the run that wrote it, and a run whose key is lower
// does not start. The check is made while the lock is held, just before
// the command starts, and the record is written before the lock is
// released: the next holder, on any host, sees it. No clock is involved,
// only the keys. An equal key is a retry of the same pipeline and runs.

// OutdatedError means the command was not run: a run with a higher order
// key already succeeded under the lock.
type OutdatedError struct {
	Path string
	Key  int64 // this run's
	Last success.Record
}

// Recorded is the key that already succeeded.
func (e *OutdatedError) Recorded() int64 { return *e.Last.Owner.OrderKey }

func (e *OutdatedError) Error() string {
	s := fmt.Sprintf("not running: order key %d is outdated, %s already succeeded with order key %d", e.Key, e.Path, e.Recorded())
	// Another client may write a record with a key and nothing else: it
	// names no run.
	if e.Last.ByZklock && e.Last.Owner.Host != "" {
		s += fmt.Sprintf(" (on %s pid %d)", e.Last.Owner.Host, e.Last.Owner.PID)
	}
	return s
}

// checkOutdated decides, once the locks are held, whether a run with an
// order key may go ahead, and returns the lease at which to record its
// success (nil when an ancestor holds the path: see OnceHeldError).
func (o *Options) checkOutdated(ctx context.Context, c *zkconn.Client, h held) (*recipe.Lease, error) {
	p := success.JobPath(o.Paths)
	for _, in := range h.inherited {
		if in.Path() == p {
			return nil, &OnceHeldError{Path: p, PID: in.PID, OrderKey: true}
		}
	}
	var l *recipe.Lease
	for _, x := range h.leases {
		if x.Path == p {
			l = x
		}
	}
	last, ok, err := success.Read(ctx, c, p)
	if err != nil {
		return nil, err
	}
	if !ok || !last.ByZklock || last.Owner.OrderKey == nil {
		o.logf("%s: no order key recorded yet; running with order key %d", p, *o.OrderKey)
		return l, nil
	}
	if *o.OrderKey < *last.Owner.OrderKey {
		return nil, &ConflictError{Err: &OutdatedError{Path: p, Key: *o.OrderKey, Last: last}, Code: o.ConflictCode}
	}
	o.logf("%s last succeeded with order key %d; running with order key %d", p, *last.Owner.OrderKey, *o.OrderKey)
	return l, nil
}

// carryKey keeps the recorded order key in a success record that a run
// without one writes (--once-per alone): a run that does not order
// itself must not open the path to outdated runs. It returns me with the
// key of the record at path, if there is one.
func carryKey(ctx context.Context, c *zkconn.Client, path string, me owner.Owner) owner.Owner {
	if me.OrderKey != nil {
		return me
	}
	last, ok, err := success.Read(ctx, c, path)
	if err == nil && ok && last.ByZklock {
		me.OrderKey = last.Owner.OrderKey
	}
	return me
}
