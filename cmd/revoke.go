package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/inspect"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/waitlimit"
)

// revokeOptions are revoke's flags.
type revokeOptions struct {
	Global *globalOptions
	Path   string
	Node   string
	// Wait is waitlimit.None unless --wait or --timeout asks to wait.
	Wait         waitlimit.Limit
	WaitFlag     bool
	ConflictCode int
}

func newCmdRevoke(g *globalOptions, u *ui, runF func(context.Context, *revokeOptions) error) *cobra.Command {
	o := &revokeOptions{Global: g, Wait: waitlimit.None}
	c := &cobra.Command{
		Use:   "revoke --path PATH [--node NAME] [--wait] [--timeout D]",
		Short: "Ask the holder of a lock to stop and release it",
		Long: `Ask the holders of the lock at --path (or, with --node, one contender,
holder or waiter) to give it up. The request is Apache Curator's: the bytes
__REVOKE__ written as the data of the contender's node, so it reaches a
Curator InterProcessMutex made revocable as well as zklock.

A zklock holder that sees the request stops its command as on a lost lock
(SIGTERM to its process group, --kill-grace, SIGKILL), releases the lock and
exits 76, naming who revoked it and when; the next waiter then proceeds. A
revoked zklock waiter leaves the queue and exits 76 without running its
command. A holder started with --on-revoke ignore lets its command finish;
list shows the revocation as pending.

Revocation is cooperative: it needs the holder's process to be alive and
connected. A holder that is gone is handled by its session's expiry. Kazoo's
locks have no revocation: a Kazoo holder is not written to, and revoke exits
75 naming it.

With no holder (or no contender --node: it left), revoke says there is
nothing to revoke and exits 0; a --node no contender could have is exit 64.
A holder that hands the lock on while revoke writes its request is followed:
the new holder is asked, unless the one that left had been revoked already.
--wait waits until the revoked contenders have released (exit 0), bounded
by --timeout (exit 75, or --conflict-exit-code).`,
		Example: `  zklock revoke --path /locks/nightly-report
  zklock revoke --path /locks/deploy --wait --timeout 1m
  zklock revoke --path /locks/deploy --node _c_0f6c…-lock-0000000007`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.run(c.Context(), u, c.Flags().Changed("timeout"))
		},
	}
	f := c.Flags()
	f.StringVar(&o.Path, "path", "", "lock `PATH` (required)")
	f.Var((*nodeValue)(&o.Node), "node", "revoke only this contender (a node name as list shows it, or its full path), holder or waiter")
	f.BoolVar(&o.WaitFlag, "wait", false, "wait until the revoked contenders have released the lock")
	f.Var((*timeoutValue)(&o.Wait), "timeout", "with --wait, give up waiting after this long (exit 75); implies --wait; default: wait forever")
	o.ConflictCode = ExitBusy
	f.VarP((*exitCodeValue)(&o.ConflictCode), "conflict-exit-code", "E", "exit code when --timeout expires before the release")
	return c
}

// wait is how long to wait for the release: --timeout alone implies
// --wait, and --wait alone waits forever.
func (o *revokeOptions) wait(timeoutGiven bool) waitlimit.Limit {
	if o.WaitFlag && !timeoutGiven {
		return waitlimit.Forever
	}
	return o.Wait
}

// run validates the flags and hands them to the runner.
func (o *revokeOptions) run(ctx context.Context, u *ui, timeoutGiven bool) error {
	if o.Path == "" {
		return usageErrorf("--path is required")
	}
	if err := validateLockPath(o.Path); err != nil {
		return err
	}
	if o.Node != "" {
		// A name no contender could have is a mistake, said so with 64;
		// a well-formed name that is not there is a contender that left
		// (see docs/guide/revoke.md), which revoke reports with 0.
		if err := recipe.ValidateNode(o.Path, o.Node); err != nil {
			return &UsageError{Err: err}
		}
	}
	wait := o.wait(timeoutGiven)
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return err
	}
	err = inspect.Revoke(ctx, inspect.RevokeOptions{Conn: conn, Path: o.Path, Node: o.Node, Wait: wait,
		Out: u.out, Logf: u.logf})
	return asConflict(err, o.ConflictCode)
}
