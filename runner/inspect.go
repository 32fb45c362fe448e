package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/view"
	"github.com/zklock/zklock/zkconn"
)

// InspectOptions describe one list or holders.
type InspectOptions struct {
	Conn zkconn.Options
	Path string
	// HoldersOnly shows who holds the lock at Path (holders); otherwise
	// every queue at or below Path is shown (list).
	HoldersOnly bool
	// JSON prints JSON instead of a table; Color colours the table.
	JSON, Color bool
	Out         io.Writer
	// Warnf prints warnings; it may be nil.
	Warnf func(format string, args ...any)
}

// Inspect connects, reads the queues and writes them to o.Out.
func Inspect(ctx context.Context, o InspectOptions) error {
	client, err := zkconn.Dial(ctx, o.Conn)
	if err != nil {
		return err
	}
	defer client.Close()
	if o.HoldersOnly {
		return o.holders(ctx, client)
	}
	return o.list(ctx, client)
}

func (o InspectOptions) list(ctx context.Context, client *zkconn.Client) error {
	tree, err := lock.InspectTree(ctx, client, o.Path)
	if err != nil {
		return err
	}
	for _, p := range tree.Skipped {
		if o.Warnf != nil {
			o.Warnf("skipped %s: this client may not read it (its ACL does not grant READ)", p)
		}
	}
	if o.JSON {
		return view.TreeJSON(o.Out, tree)
	}
	if len(tree.Queues) == 0 {
		_, err := fmt.Fprintf(o.Out, "no locks held or awaited at or below %s\n", o.Path)
		return err
	}
	var all []lock.Entry
	for _, q := range tree.Queues {
		all = append(all, q.Entries...)
	}
	return view.Table(o.Out, all, true, o.Color, time.Now())
}

func (o InspectOptions) holders(ctx context.Context, client *zkconn.Client) error {
	hs, err := lock.Holders(ctx, client, o.Path)
	if err != nil {
		return err
	}
	if o.JSON {
		return view.EntriesJSON(o.Out, hs)
	}
	if len(hs) == 0 {
		_, err := fmt.Fprintf(o.Out, "%s is free\n", o.Path)
		return err
	}
	return view.Table(o.Out, hs, false, o.Color, time.Now())
}
