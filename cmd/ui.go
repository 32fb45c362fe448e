package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/zklock/zklock/view"
)

// ui is zklock's one voice on stderr: every message is one line, prefixed
// "zklock: ", lower case, no trailing period, with a hint where one helps.
// The command owns stdout; zklock writes there only for list, holders and
// version. Colour only when the stream is a terminal and NO_COLOR is unset.
type ui struct {
	out, err        io.Writer
	outTTY, errTTY  bool
	verbose         bool
	prefix, warnPfx string
}

func newUI(out, errw io.Writer) *ui {
	u := &ui{out: out, err: errw, outTTY: isTerminal(out), errTTY: isTerminal(errw)}
	u.prefix, u.warnPfx = "zklock: ", "zklock: warning: "
	if u.errTTY && os.Getenv("NO_COLOR") == "" {
		u.prefix = color.New(color.FgRed, color.Bold).Sprint("zklock:") + " "
		u.warnPfx = color.New(color.FgYellow, color.Bold).Sprint("zklock: warning:") + " "
	}
	return u
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func (u *ui) colorOut() bool { return u.outTTY && os.Getenv("NO_COLOR") == "" }

func (u *ui) errorf(format string, args ...any) {
	fmt.Fprintln(u.err, u.prefix+oneLine(fmt.Sprintf(format, args...)))
}

func (u *ui) warnf(format string, args ...any) {
	fmt.Fprintln(u.err, u.warnPfx+oneLine(fmt.Sprintf(format, args...)))
}

func (u *ui) logf(format string, args ...any) {
	if u.verbose {
		fmt.Fprintln(u.err, "zklock: "+oneLine(fmt.Sprintf(format, args...)))
	}
}

// oneLine makes a message one safe line. Messages quote what other clients
// wrote (a holder's host, user and command line), so control characters
// and invalid UTF-8 are shown escaped rather than sent to the terminal.
func oneLine(s string) string {
	return view.Escape(strings.TrimSpace(s))
}
