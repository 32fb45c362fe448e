package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
)

// marks are a check's two outcomes, as symbols for a terminal and as plain
// ASCII for logs, pipes and TERM=dumb, where a ✓ may arrive as mojibake.
var marks = map[bool]struct{ symbol, ascii string }{
	true:  {"✓", "ok  "},
	false: {"✗", "FAIL"},
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
	ok := c.Err == nil
	mark := marks[ok].ascii
	if l.symbols {
		mark = marks[ok].symbol
	}
	if l.color {
		fg := color.FgGreen
		if !ok {
			fg = color.FgRed
		}
		col := color.New(fg, color.Bold)
		col.EnableColor()
		mark = col.Sprint(mark)
	}
	text := c.Detail
	if !ok {
		text = c.Err.Error()
	}
	fmt.Fprintf(l.out, "%s %-*s  %s\n", mark, l.width, c.Subject, strings.ReplaceAll(text, "\n", " "))
}
