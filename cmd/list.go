package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/inspect"
	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/zkconn"
)

// inspectOptions are list's and holders' flags.
type inspectOptions struct {
	Global *globalOptions
	Path   string
	JSON   bool
	Watch  bool
}

// watchHelp is what --watch does, for list's and holders' help.
const watchHelp = `With --watch, the answer is shown again whenever it changes (a contender
joins, leaves, takes the lock or is revoked), until Ctrl-C or SIGTERM, which
end it with exit status 0. ZooKeeper's watches drive it, not polling: a
child watch on each node listed, none per contender. At a terminal the
table is redrawn in place under the time of the last change, fitted to the
screen (the holders, then the first waiters and how many more); otherwise,
or with --json, each change prints one line of JSON in --json's shape, at
most four a second (changes within 250ms of a line share the next). A path
that disappears shows as empty. A lost connection is reported (in the
header, or as a warning on stderr) and retried; an expired session is
replaced and its watches set again. A contender's data (a pending
revocation, say) is read again when the queue changes.`

func newCmdList(g *globalOptions, u *ui, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	o := &inspectOptions{Global: g}
	c := &cobra.Command{
		Use:   "list [--path PATH] [--json] [--watch]",
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
status is 0. --json prints {"locks": [...], "skipped": [paths]}.

` + watchHelp,
		Example: `  zklock list --path /locks
  zklock list --path /locks/backup --json | jq '.locks[0].entries[].host'
  zklock list --path /locks --watch`,
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
	c.Flags().BoolVar(&o.Watch, "watch", false, "show the queues again at every change, until Ctrl-C")
	return c
}

func newCmdHolders(g *globalOptions, u *ui, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	o := &inspectOptions{Global: g}
	c := &cobra.Command{
		Use:   "holders --path PATH [--json] [--watch]",
		Short: "Show who holds a lock now",
		Long: `Show who holds the lock at --path now, in list's columns but PATH
(waiters are left out), and the last success that --once-per recorded there.
A lock that nobody holds is reported free, with exit status 0. --json prints
an array of list's entries, so that scripts read holders as a list; the last
success, with its order key, is list --json --path PATH's last_success.

` + watchHelp,
		Example: `  zklock holders --path /locks/backup
  zklock holders --path /locks/backup --json
  zklock holders --path /locks/backup --watch --json | jq -c 'map(.host)'`,
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
	c.Flags().BoolVar(&o.Watch, "watch", false, "show the holders again at every change, until Ctrl-C")
	return c
}

// run validates the flags and hands them to the runner: a parent path
// (even /) for list, a lock path for holders.
func (o *inspectOptions) run(ctx context.Context, u *ui, holdersOnly bool) error {
	if holdersOnly {
		if o.Path == "" {
			return usageErrorf("--path is required")
		}
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
	if o.Watch {
		// A watch runs until it is stopped: Ctrl-C or SIGTERM is its
		// normal end, with exit status 0.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	return inspect.Inspect(ctx, inspect.InspectOptions{Conn: conn, Path: o.Path, HoldersOnly: holdersOnly,
		JSON: o.JSON, Color: u.colorOut, Live: o.live(u), ScreenSize: func() view.Screen { return terminalSize(u.out) },
		Out: u.out, Warnf: u.warnf})
}

// live is how --watch shows the queues: drawn over the screen at a
// terminal that can, as JSON lines elsewhere or with --json.
func (o *inspectOptions) live(u *ui) inspect.Live {
	switch {
	case !o.Watch:
		return inspect.Once
	case o.JSON || !canDraw(u.out, os.Getenv):
		return inspect.Lines
	}
	return inspect.Screen
}
