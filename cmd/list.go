package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/zkconn"
)

// inspectOptions are list's and holders' flags.
type inspectOptions struct {
	Global *globalOptions
	Path   string
	JSON   bool
}

func newCmdList(g *globalOptions, u *ui, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	o := &inspectOptions{Global: g}
	c := &cobra.Command{
		Use:   "list [--path PATH] [--json]",
		Short: "Show the queue of a lock, or of every lock below a path",
		Long: `Show each lock's queue in order: position, holding or waiting, mode
(exclusive, shared, or a semaphore's lease/N), the flavor the node's name
shows, host, pid, user, since when, command line and node. Given a parent
path (or no --path, meaning /), show every lock below it. Nodes written by
other clients (Curator, Kazoo, ...) are shown with what their data says.
Below the table, one line per lock path names the last success that
--once-per recorded there.

Subtrees that this client may not read (another team's ACL) are skipped:
each is named once in a warning on stderr, the rest is listed, and the exit
status is 0. --json prints {"locks": [...], "skipped": [paths]}.`,
		Example: `  zklock list --path /locks
  zklock list --path /locks/backup --json | jq '.locks[0].entries[].host'`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.run(c.Context(), u, false)
		},
	}
	c.Flags().StringVar(&o.Path, "path", "/", "lock path, or a parent of lock paths")
	c.Flags().BoolVar(&o.JSON, "json", false, "print JSON instead of a table")
	return c
}

func newCmdHolders(g *globalOptions, u *ui, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	o := &inspectOptions{Global: g}
	c := &cobra.Command{
		Use:   "holders --path PATH [--json]",
		Short: "Show who holds a lock now",
		Long: `Show who holds the lock at --path now, in list's columns but PATH
(waiters are left out), and the last success that --once-per recorded there.
A lock that nobody holds is reported free, with exit status 0. --json prints
an array of list's entries.`,
		Example: `  zklock holders --path /locks/backup
  zklock holders --path /locks/backup --json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.run(c.Context(), u, true)
		},
	}
	c.Flags().StringVar(&o.Path, "path", "", "lock path (required)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print JSON instead of a table")
	return c
}

// run validates the flags and hands them to the runner: a parent path
// (even /) for list, a lock path for holders.
func (o *inspectOptions) run(ctx context.Context, u *ui, holdersOnly bool) error {
	if o.Path == "" {
		return usageErrorf("--path is required")
	}
	if holdersOnly {
		if err := validateLockPath(o.Path); err != nil {
			return err
		}
	} else if err := zkconn.ValidatePath(o.Path); err != nil {
		return &UsageError{Err: err}
	}
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return err
	}
	return runner.Inspect(ctx, runner.InspectOptions{Conn: conn, Path: o.Path, HoldersOnly: holdersOnly,
		JSON: o.JSON, Color: u.colorOut, Out: u.out, Warnf: u.warnf})
}
