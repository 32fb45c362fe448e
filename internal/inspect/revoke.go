package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/zkconn"
)

// RevokeOptions describe one revoke.
type RevokeOptions struct {
	Conn zkconn.Options
	Path string
	// Node names the one contender to revoke, holder or waiter; "" means
	// every holder of Path.
	Node string
	// Wait is how long to wait for the revoked contenders to release,
	// counted from the start: waitlimit.None returns once the requests
	// are written.
	Wait waitlimit.Limit
	Out  io.Writer
	// Logf prints progress for -v; it may be nil.
	Logf func(format string, args ...any)
}

// RevokeTimeoutError means the revoked contenders had not released when
// the wait ran out: they may ignore revocations (--on-revoke ignore, a
// Curator lock not made revocable) or be stopping slowly.
type RevokeTimeoutError struct {
	Path    string
	After   time.Duration
	Holding []recipe.Entry // those revoked, still there
}

func (e *RevokeTimeoutError) Error() string {
	return fmt.Sprintf("%s was not released within %s of the revocation", e.Path, e.After)
}

// NotRevocableError means a contender to revoke is held by a client that
// has no revocation (Kazoo): nothing was written to it.
type NotRevocableError struct {
	Path    string
	Holders []recipe.Entry
}

func (e *NotRevocableError) Error() string {
	return fmt.Sprintf("cannot revoke %s: it is held by %s, and Kazoo's locks have no revocation; stop that client itself",
		e.Path, view.DescribeEntry(e.Holders[0]))
}

// Revoke asks the holders of o.Path (or the contender o.Node) to give up
// their places, and with a Wait, waits until they have. A lock that would
// not be released is said with an error that IsConflict recognizes.
func Revoke(ctx context.Context, o RevokeOptions) error {
	// --timeout counts from the start: connecting, finding the holders and
	// asking them are part of what the caller waits for.
	start := time.Now()
	client, err := zkconn.Dial(ctx, o.Conn)
	if err != nil {
		return err
	}
	defer client.Close()
	done, err := recipe.Revoke(ctx, client, o.Path, o.Node, recipe.Requester())
	asked := done.Asked
	if errors.Is(err, recipe.ErrHandoffChurn) {
		// Those asked were asked; the lock is busy changing hands.
		if err := printAsked(o.Out, o.Path, asked); err != nil {
			return err
		}
		return err
	}
	if err != nil {
		return err
	}
	if len(done.Deaf) > 0 {
		// Those that can hear it were asked; one that cannot keeps the
		// lock whatever anyone waits for.
		if err := printAsked(o.Out, o.Path, asked); err != nil {
			return err
		}
		return &NotRevocableError{Path: o.Path, Holders: done.Deaf}
	}
	if len(asked) == 0 {
		_, err := fmt.Fprintf(o.Out, "nothing to revoke: %s\n", view.Escape(nothingToRevoke(o.Path, o.Node, done.Left)))
		return err
	}
	if err := printAsked(o.Out, o.Path, asked); err != nil {
		return err
	}
	wait := o.Wait.From(start)
	if wait.IsNoWait() {
		return nil
	}
	wctx := ctx
	if d, ok := wait.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadlineCause(ctx, d, recipe.ErrWaitTimeout)
		defer cancel()
	}
	err = recipe.Released(wctx, client, asked)
	if err != nil && errors.Is(context.Cause(wctx), recipe.ErrWaitTimeout) {
		timeout, _ := o.Wait.Timeout()
		return &RevokeTimeoutError{Path: o.Path, After: timeout, Holding: asked}
	}
	if err != nil {
		return err
	}
	if o.Logf != nil {
		o.Logf("%s released %s after the revocation", o.Path, time.Since(start).Round(time.Millisecond))
	}
	_, err = fmt.Fprintf(o.Out, "released %s\n", view.Escape(o.Path))
	return err
}

// nothingToRevoke says why a revoke asked nobody, given the contenders
// that left before the request reached them.
func nothingToRevoke(path, node string, left []recipe.Entry) string {
	switch {
	case node != "" && len(left) > 0:
		return fmt.Sprintf("contender %s of %s left before the request reached it", node, path)
	case node != "":
		return fmt.Sprintf("%s has no contender %s (it left, or never was)", path, node)
	case len(left) == 0:
		return path + " is free"
	}
	for _, e := range left {
		if e.Revoke.Pending() {
			return fmt.Sprintf("%s released %s before the request reached it, as an earlier revocation asked; whoever holds it now was not asked",
				view.DescribeEntry(e), path)
		}
	}
	return fmt.Sprintf("%s released %s before the request reached it, and %s is free now", view.DescribeEntry(left[0]), path, path)
}

// printAsked says which contenders of path were asked to give up.
func printAsked(w io.Writer, path string, asked []recipe.Entry) error {
	for _, e := range asked {
		role := "holder"
		if !e.Holding {
			role = "waiter"
		}
		if _, err := fmt.Fprintf(w, "revoked %s %s: %s\n", view.Escape(path), role, view.Escape(view.DescribeEntry(e))); err != nil {
			return err
		}
	}
	return nil
}
