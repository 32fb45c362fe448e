package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/tree"
	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/lock"
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
	tree, err := tree.Read(ctx, client, o.Path)
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
	var all []lock.Entry
	for _, q := range tree.Queues {
		all = append(all, q.Entries...)
	}
	now := time.Now()
	if err := o.table(all, true, "no locks held or awaited at or below "+o.Path, now); err != nil {
		return err
	}
	return view.LastSuccesses(o.Out, tree.Queues, now)
}

// table writes entries as a table, or the line none when there are none.
func (o InspectOptions) table(es []lock.Entry, withPath bool, none string, now time.Time) error {
	if len(es) == 0 {
		_, err := fmt.Fprintln(o.Out, none)
		return err
	}
	return view.Table(o.Out, es, withPath, o.Color, now)
}

func (o InspectOptions) holders(ctx context.Context, client *zkconn.Client) error {
	hs, err := lock.Holders(ctx, client, o.Path)
	if err != nil {
		return err
	}
	if o.JSON {
		return view.EntriesJSON(o.Out, hs)
	}
	last, ok, err := success.Read(ctx, client, o.Path)
	if err != nil && !zkconn.IsPermission(err) {
		return err
	}
	now := time.Now()
	if err := o.table(hs, false, o.Path+" is free", now); err != nil {
		return err
	}
	if !ok {
		return nil
	}
	_, err = fmt.Fprintln(o.Out, view.LastSuccess(last, now))
	return err
}
