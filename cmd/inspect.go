package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/view"
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
		Long: `Show each lock's queue in order: position, holding or waiting, shared or
exclusive, host, pid, user, since when, command line and node. Given a parent
path (or no --path, meaning /), show every lock below it. Nodes written by
other clients (Curator, Kazoo, ...) are shown with what their data says.

Subtrees that this client may not read (another team's ACL) are skipped:
each is named once in a warning on stderr, the rest is listed, and the exit
status is 0. --json prints {"locks": [...], "skipped": [paths]}.`,
		Example: `  zklock list --path /locks
  zklock list --path /locks/backup --json | jq '.locks[0].entries[].host'`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			u.verbose = g.Verbose
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.list(c.Context(), u)
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
		Example: `  zklock holders --path /locks/backup
  zklock holders --path /locks/backup --json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			u.verbose = g.Verbose
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.holders(c.Context(), u)
		},
	}
	c.Flags().StringVar(&o.Path, "path", "", "lock path (required)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print JSON instead of a table")
	return c
}

func (o *inspectOptions) connect(ctx context.Context, u *ui) (*zkconn.Client, error) {
	if o.Path != "/" {
		if o.Path == "" {
			return nil, usageErrorf("--path is required")
		}
		if err := zkconn.ValidatePath(o.Path); err != nil {
			return nil, &UsageError{Err: err}
		}
	}
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return nil, err
	}
	return zkconn.Dial(ctx, conn)
}

func (o *inspectOptions) list(ctx context.Context, u *ui) error {
	client, err := o.connect(ctx, u)
	if err != nil {
		return err
	}
	defer client.Close()
	tree, err := lock.InspectTree(ctx, client, o.Path)
	if err != nil {
		return err
	}
	for _, p := range tree.Skipped {
		u.warnf("skipped %s: this client may not read it (its ACL does not grant READ)", p)
	}
	if o.JSON {
		return view.TreeJSON(u.out, tree)
	}
	if len(tree.Queues) == 0 {
		fmt.Fprintf(u.out, "no locks held or awaited at or below %s\n", o.Path)
		return nil
	}
	var all []lock.Entry
	for _, q := range tree.Queues {
		all = append(all, q.Entries...)
	}
	return view.Table(u.out, all, true, u.colorOut(), time.Now())
}

func (o *inspectOptions) holders(ctx context.Context, u *ui) error {
	client, err := o.connect(ctx, u)
	if err != nil {
		return err
	}
	defer client.Close()
	hs, err := lock.Holders(ctx, client, o.Path)
	if err != nil {
		return err
	}
	if o.JSON {
		return view.EntriesJSON(u.out, hs)
	}
	if len(hs) == 0 {
		fmt.Fprintf(u.out, "%s is free\n", o.Path)
		return nil
	}
	return view.Table(u.out, hs, false, u.colorOut(), time.Now())
}
