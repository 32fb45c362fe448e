package view

import (
	"fmt"
	"io"
	"time"
)

// clearScreen moves the cursor home and erases the screen: each frame of a
// live view is drawn over the one before, as watch(1) does.
const clearScreen = "\x1b[H\x1b[2J"

// Redraw writes frame over what the terminal shows, in one write, so that
// a reader never sees a frame half drawn.
func Redraw(w io.Writer, frame string) error {
	_, err := io.WriteString(w, clearScreen+frame)
	return err
}

// LiveHeader is a live view's first line: what it shows, the time of the
// last change (this host's clock), and while no server carries the
// session, since when, e.g. "watching /locks; last change 10:31:02;
// disconnected since 10:31:07, retrying".
func LiveHeader(what string, changed, down time.Time) string {
	s := fmt.Sprintf("watching %s; last change %s", Escape(what), clock(changed))
	if !down.IsZero() {
		s += fmt.Sprintf("; disconnected since %s, retrying", clock(down))
	}
	return s
}

// Disconnected says, in a line of its own, since when no server carries
// the session of a live view that writes no header (one snapshot a line).
func Disconnected(down time.Time) string {
	return fmt.Sprintf("disconnected from ZooKeeper since %s, retrying", clock(down))
}

// Reconnected says that a live view is connected again, and for how long
// it was not.
func Reconnected(down, now time.Time) string {
	return fmt.Sprintf("connected to ZooKeeper again, after %s", now.Sub(down).Round(time.Millisecond))
}

// clock is a local time of day to the second.
func clock(t time.Time) string { return t.Local().Format("15:04:05") }
