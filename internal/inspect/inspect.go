// Package inspect is zklock's look at the locks from outside: list and
// holders, once or live, revoke, forget, and the lookups shell completion
// makes. It never runs a command.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/tree"
	"github.com/zklock/zklock/internal/view"
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
	// Live says whether the queues are read once or shown again at every
	// change, until ctx ends, and how.
	Live Live
	// ScreenSize is the terminal's size, read at each frame of a Screen
	// view, which is fitted to it; nil, or a size of zero, fits nothing.
	ScreenSize func() view.Screen
	Out        io.Writer
	// Warnf prints warnings; it may be nil.
	Warnf func(format string, args ...any)
}

// Inspect connects, reads the queues and writes them to o.Out.
//
// A reader that went away (`| head`) ends it quietly, as it ends a watch
// (live): nobody is left to show the queues to, and a "broken pipe" error
// with exit 69 would read as trouble with ZooKeeper.
func Inspect(ctx context.Context, o InspectOptions) error {
	err := o.inspect(ctx)
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

func (o InspectOptions) inspect(ctx context.Context) error {
	if o.Live != Once {
		return o.live(ctx)
	}
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
	o.warnSkipped(tree.Skipped, nil)
	if o.JSON {
		return view.TreeJSON(o.Out, tree)
	}
	return o.treeTable(o.Out, tree, time.Now())
}

// warnSkipped names each path skipped for its ACL once: warned, if not
// nil, remembers those named before.
func (o InspectOptions) warnSkipped(skipped []string, warned map[string]bool) {
	for _, p := range skipped {
		if o.Warnf != nil && !warned[p] {
			o.Warnf("skipped %s: this client may not read it (its ACL does not grant READ)", p)
		}
		if warned != nil {
			warned[p] = true
		}
	}
}

// treeTable writes list's table and the last successes below it.
func (o InspectOptions) treeTable(w io.Writer, t tree.Tree, now time.Time) error {
	var all []recipe.Entry
	for _, q := range t.Queues {
		all = append(all, q.Entries...)
	}
	if err := o.table(w, all, true, "no locks held or awaited at or below "+o.Path, now); err != nil {
		return err
	}
	return view.LastSuccesses(w, t.Queues, now)
}

// table writes entries as a table, or the line none when there are none.
func (o InspectOptions) table(w io.Writer, es []recipe.Entry, withPath bool, none string, now time.Time) error {
	if len(es) == 0 {
		_, err := fmt.Fprintln(w, none)
		return err
	}
	return view.Table(w, es, withPath, o.Color, now)
}

func (o InspectOptions) holders(ctx context.Context, client *zkconn.Client) error {
	hs, err := recipe.Holders(ctx, client, o.Path)
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
	var lastp *success.Record
	if ok {
		lastp = &last
	}
	return o.holdersTable(o.Out, hs, lastp, time.Now())
}

// holdersTable writes holders' table and the last success below it.
func (o InspectOptions) holdersTable(w io.Writer, hs []recipe.Entry, last *success.Record, now time.Time) error {
	if err := o.table(w, hs, false, o.Path+" is free", now); err != nil {
		return err
	}
	if last == nil {
		return nil
	}
	_, err := fmt.Fprintln(w, view.LastSuccess(*last, now))
	return err
}
