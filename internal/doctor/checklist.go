package doctor

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
)

// outcome is what a check's line says of it.
type outcome int

const (
	passed outcome = iota
	warned
	failed
)

// marks are a check's outcomes, as symbols for a terminal and as plain
// ASCII for logs, pipes and TERM=dumb, where a ✓ may arrive as mojibake.
var marks = map[outcome]struct {
	symbol, ascii string
	color         color.Attribute
}{
	passed: {"✓", "ok  ", color.FgGreen},
	warned: {"!", "warn", color.FgYellow},
	failed: {"✗", "FAIL", color.FgRed},
}

// checklist prints checks one per line as they complete, the subjects
// padded to one column.
type checklist struct {
	out            io.Writer
	width          int
	symbols, color bool
}

func newChecklist(o Options) *checklist {
	w := len("session")
	for _, s := range append([]string{o.Path}, o.Conn.ConnString.Servers...) {
		w = max(w, len(s))
	}
	return &checklist{out: o.Out, width: w, symbols: o.Symbols, color: o.Color}
}

func (l *checklist) write(c Check) {
	o, text := passed, c.Detail
	if c.Err != nil {
		o, text = failed, c.Err.Error()
		if errors.As(c.Err, new(*Warning)) {
			o = warned
		}
	}
	mark := marks[o].ascii
	if l.symbols {
		mark = marks[o].symbol
	}
	if l.color {
		col := color.New(marks[o].color, color.Bold)
		col.EnableColor()
		mark = col.Sprint(mark)
	}
	fmt.Fprintf(l.out, "%s %-*s  %s\n", mark, l.width, c.Subject, strings.ReplaceAll(text, "\n", " "))
}
