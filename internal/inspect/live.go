package inspect

import (
	"context"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/follow"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/view"
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

// linesPace is the least time between two lines of a watch in JSON: at
// most four lines a second, each with every change made since the last.
// A reader follows the queue within a quarter of a second, and a queue of
// a thousand that churns costs it a megabyte a second, not a hundred
// (each line holds the whole queue, 265 bytes an entry).
const linesPace = 250 * time.Millisecond

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
	var prev follow.Snapshot
	pace := time.Duration(0)
	if o.Live == Lines {
		pace = linesPace
	}
	return follow.Run(ctx, follow.Options{Conn: o.Conn, Path: o.Path, HoldersOnly: o.HoldersOnly, Pace: pace,
		Show: func(s follow.Snapshot) error {
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

// frame draws snapshot s over the terminal's screen, fitted to its size
// (view.FitEntries, view.FitScreen): the header and the holders, then the
// first waiters and how many more there are.
func (o InspectOptions) frame(s follow.Snapshot) error {
	var b strings.Builder
	now := time.Now()
	what := o.Path
	if !o.HoldersOnly {
		what += " and below"
	}
	var size view.Screen
	if o.ScreenSize != nil {
		size = o.ScreenSize()
	}
	b.WriteString(view.LiveHeader(what, s.Changed, s.Down) + "\n\n")
	rows := size.Rows - 2 // below the header and its blank line
	var err error
	if o.HoldersOnly {
		var last []success.Record
		if s.LastSuccess != nil {
			last = []success.Record{*s.LastSuccess}
		}
		err = o.fitted(&b, s.Holders, last, rows, now)
	} else {
		var es []recipe.Entry
		var last []success.Record
		for _, q := range s.Tree.Queues {
			es = append(es, q.Entries...)
			if q.LastSuccess != nil {
				last = append(last, *q.LastSuccess)
			}
		}
		err = o.fitted(&b, es, last, rows, now)
	}
	if err != nil {
		return err
	}
	return view.Redraw(o.Out, view.FitScreen(b.String(), size))
}

// fitted writes a live view's table of es with the last successes below
// it, in at most rows lines when rows is above zero: what does not fit is
// left out and counted on the last line.
func (o InspectOptions) fitted(b *strings.Builder, es []recipe.Entry, last []success.Record, rows int, now time.Time) error {
	var cut view.Cut
	if rows > 0 {
		es, cut = view.FitEntries(es, rows, len(last))
	}
	var err error
	switch {
	case len(es) == 0 && cut.Holding+cut.Waiting > 0:
		// No room for a table: the last line counts them, and no
		// line may say the lock is free.
	case o.HoldersOnly:
		err = o.table(b, es, false, o.Path+" is free", now)
	default:
		err = o.table(b, es, true, "no locks held or awaited at or below "+o.Path, now)
	}
	if err != nil {
		return err
	}
	if cut.Lines == 0 {
		for _, l := range last {
			b.WriteString(view.LastSuccess(l, now) + "\n")
		}
	}
	if more := cut.More(); more != "" {
		b.WriteString(more + "\n")
	}
	return nil
}
