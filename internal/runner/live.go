package runner

import (
	"context"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/internal/watch"
)

// Live is how list and holders show the queues.
type Live int

const (
	// Once reads the queues once.
	Once Live = iota
	// Lines prints them again at every change, one line of JSON each.
	Lines
	// Screen draws them again at every change over the terminal's screen.
	Screen
)

// live shows the queues again at every change until ctx ends, which is
// its normal end: at a terminal each snapshot is drawn over the one
// before, under a line with the time of the last change and the state of
// the connection; elsewhere each is one line of JSON, and the connection's
// loss and return are warnings.
//
// A reader that went away (`| head -1`) ends the watch too, at the next
// change (Inspect says it quietly).
func (o InspectOptions) live(ctx context.Context) error {
	warned := map[string]bool{}
	var prev watch.Snapshot
	return watch.Run(ctx, watch.Options{Conn: o.Conn, Path: o.Path, HoldersOnly: o.HoldersOnly,
		Show: func(s watch.Snapshot) error {
			o.warnSkipped(s.Tree.Skipped, warned)
			defer func() { prev = s }()
			if o.Live == Screen {
				return o.frame(s)
			}
			if o.Warnf != nil {
				switch {
				case !s.Down.IsZero() && prev.Down.IsZero():
					o.Warnf("%s", view.Disconnected(s.Down))
				case s.Down.IsZero() && !prev.Down.IsZero():
					o.Warnf("%s", view.Reconnected(prev.Down, time.Now()))
				}
			}
			if s.Changed.Equal(prev.Changed) {
				return nil // the connection changed, not the queues
			}
			if o.HoldersOnly {
				return view.EntriesJSONLine(o.Out, s.Holders)
			}
			return view.TreeJSONLine(o.Out, s.Tree)
		}})
}

// frame draws snapshot s over the terminal's screen.
func (o InspectOptions) frame(s watch.Snapshot) error {
	var b strings.Builder
	now := time.Now()
	what := o.Path
	if !o.HoldersOnly {
		what += " and below"
	}
	b.WriteString(view.LiveHeader(what, s.Changed, s.Down) + "\n\n")
	var err error
	if o.HoldersOnly {
		err = o.holdersTable(&b, s.Holders, s.LastSuccess, now)
	} else {
		err = o.treeTable(&b, s.Tree, now)
	}
	if err != nil {
		return err
	}
	return view.Redraw(o.Out, b.String())
}
