package cmd

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/zklock/zklock/internal/view"
)

// ui is zklock's one voice on stderr: every message is one line, prefixed
// "zklock: ", lower case, no trailing period, with a hint where one helps.
// The command owns stdout; zklock writes there only for list, holders and
// version. Each stream is coloured only when it is itself a terminal and
// neither NO_COLOR nor TERM=dumb says otherwise: the decision for stderr is
// never taken from stdout, nor the other way round (fatih/color's global
// default looks at stdout only, so it is never consulted).
//
// Under --log-format json every line is a JSON object instead (jsonLog),
// messages and events alike, and nothing else is written to stderr: no
// colour, no status line.
type ui struct {
	out, err           io.Writer
	colorOut, colorErr bool
	verbose            bool
	prefix, warnPfx    string
	// status is the wait's status line, if one is shown: every message
	// clears it first.
	status *view.StatusLine
	// json is set under --log-format json; formatSet once the format is
	// known (from the settings, or from the arguments after an error
	// that came before them).
	json      *jsonLog
	formatSet bool
	// path is what a JSON object's path key says when the line is about
	// no path of its own: the command's --path (the first, in sorted
	// order, for run and tryrun).
	path string
	// run reports a run or tryrun (events.go); nil for other commands.
	run *runReport
	// queue is err for a run or tryrun (stderrqueue.go); nil otherwise.
	queue  *stderrQueue
	notice atomic.Pointer[noticeStyle]
}

func newUI(out, errw io.Writer) *ui {
	u := &ui{out: out, err: errw, colorOut: wantColor(out, os.Getenv), colorErr: wantColor(errw, os.Getenv)}
	u.prefix, u.warnPfx = "zklock: ", "zklock: warning: "
	if u.colorErr {
		u.prefix = colored(color.FgRed, "zklock:") + " "
		u.warnPfx = colored(color.FgYellow, "zklock: warning:") + " "
	}
	return u
}

// colored renders s in bold and fg, whatever fatih/color's global says.
func colored(fg color.Attribute, s string) string {
	c := color.New(fg, color.Bold)
	c.EnableColor()
	return c.Sprint(s)
}

// wantColor decides colour for one stream from its own terminal state and
// the environment (getenv).
func wantColor(w io.Writer, getenv func(string) string) bool {
	return canDraw(w, getenv) && getenv("NO_COLOR") == ""
}

// canDraw reports whether w is a terminal that can take more than plain
// lines (colour, symbols, a line redrawn in place): not TERM=dumb.
func canDraw(w io.Writer, getenv func(string) string) bool {
	return isTerminal(w) && getenv("TERM") != "dumb"
}

func isTerminal(w io.Writer) bool {
	f, ok := fileOf(w)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// setFormat sets the format of stderr, once.
func (u *ui) setFormat(f logFormat) {
	if u.formatSet {
		return
	}
	u.formatSet = true
	if f == jsonFormat {
		u.json = newJSONLog(u.err, os.Getenv)
		u.notice.Store(&noticeStyle{json: true, path: u.path})
	}
}

func (u *ui) errorf(format string, args ...any) {
	u.message(slog.LevelError, "error", u.prefix, format, args...)
}

func (u *ui) warnf(format string, args ...any) {
	u.message(slog.LevelWarn, "warning", u.warnPfx, format, args...)
}

// logf prints a line for -v. Under JSON it is an object at level debug,
// as is every other line of -v.
func (u *ui) logf(format string, args ...any) {
	if u.verbose {
		u.message(slog.LevelDebug, "debug", "zklock: ", format, args...)
	}
}

// progress is logf while -v is on, and nil while it is off: a package
// below skips a nil Logf's lines, and with them the work of what they
// would say.
func (u *ui) progress() func(format string, args ...any) {
	if !u.verbose {
		return nil
	}
	return u.logf
}

// message writes one message: a line with its prefix, or a JSON object
// whose event is named for its level.
func (u *ui) message(level slog.Level, event, prefix, format string, args ...any) {
	msg := oneLine(fmt.Sprintf(format, args...))
	if u.json != nil {
		u.json.line(level, event, msg, u.path)
		return
	}
	u.say(prefix + msg)
}

// say writes one line on stderr, clearing the status line first.
func (u *ui) say(line string) {
	u.status.Around(func() { fmt.Fprintln(u.err, line) })
}

// oneLine makes a message one safe line. Messages quote what other clients
// wrote (a holder's host, user and command line), so control characters
// and invalid UTF-8 are shown escaped rather than sent to the terminal; and
// they quote what the user typed, so an overlong value is cut short.
func oneLine(s string) string {
	return view.Cell(strings.TrimSpace(s))
}

// fileOf is the file behind w, if it is one: a queued stderr is still the
// terminal it writes to.
func fileOf(w io.Writer) (*os.File, bool) {
	if q, ok := w.(*stderrQueue); ok {
		w = q.w
	}
	f, ok := w.(*os.File)
	return f, ok
}
