package view

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/recipe"
)

// A live view at a terminal is drawn over the screen, as watch(1) and top
// draw theirs. A frame taller than the screen would scroll its first lines
// (the header, the holders) out of sight, and push a screenful into the
// terminal's scrollback at every redraw; a line wider than the screen
// wraps onto the next, with the same effect. So a frame is fitted to the
// screen: the header and the holders always show, then as many waiters as
// there is room for, in queue order, and a last line says how many more
// there are. The last line ends without a newline, so that a frame as tall
// as the screen does not scroll it by one.

// Screen is a terminal's size in character cells.
type Screen struct{ Rows, Cols int }

// Cut is what a fitted frame leaves out.
type Cut struct {
	Holding, Waiting int
	// Lines are other lines left out (the last successes below the
	// table).
	Lines int
}

func (c Cut) any() bool { return c.Holding+c.Waiting+c.Lines > 0 }

// More is the line that ends a frame from which c was left out, e.g.
// "… and 191 more waiting"; "" when nothing was.
func (c Cut) More() string {
	if !c.any() {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Holding, "holding"}, {c.Waiting, "waiting"}, {c.Lines, "last successes"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 1 {
		n, what, _ := strings.Cut(parts[0], " ")
		return fmt.Sprintf("… and %s more %s", n, what)
	}
	return fmt.Sprintf("… and %d more: %s", c.Holding+c.Waiting+c.Lines, strings.Join(parts, ", "))
}

// FitEntries picks the entries a table of at most rows lines (its header
// included) shows, with lines more lines below it, and a line for what is
// left out: every holder first, then the first waiters. The order of
// es is kept.
func FitEntries(es []recipe.Entry, rows, lines int) ([]recipe.Entry, Cut) {
	if 1+len(es)+lines <= rows {
		return es, Cut{}
	}
	room := max(rows-2, 0) // the table's header, and the line for the rest
	keep := make([]bool, len(es))
	for i, e := range es {
		if e.Holding && room > 0 {
			keep[i], room = true, room-1
		}
	}
	for i, e := range es {
		if !e.Holding && room > 0 {
			keep[i], room = true, room-1
		}
	}
	var shown []recipe.Entry
	cut := Cut{Lines: lines}
	for i, e := range es {
		switch {
		case keep[i]:
			shown = append(shown, e)
		case e.Holding:
			cut.Holding++
		default:
			cut.Waiting++
		}
	}
	return shown, cut
}

// FitScreen cuts frame to the screen: at most s.Rows lines, each at most
// s.Cols cells wide, the last without a newline. A screen of unknown size
// (zero) leaves frame as it is.
func FitScreen(frame string, s Screen) string {
	if s.Rows <= 0 || s.Cols <= 0 {
		return frame
	}
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	if len(lines) > s.Rows {
		lines = lines[:s.Rows]
	}
	for i, l := range lines {
		lines[i] = cutWidth(l, s.Cols)
	}
	return strings.Join(lines, "\n")
}

// cutWidth cuts line to cols cells. The line's own escape sequences (the
// table's colours: the text in it is escaped, see Escape) take no cells;
// a line cut after one is reset, so the colour does not run on.
func cutWidth(line string, cols int) string {
	w, esc := 0, false
	for i := 0; i < len(line); {
		if line[i] == 0x1b {
			end := strings.IndexAny(line[i:], "ABCDEFGHJKSTfmnsu")
			if end < 0 {
				return line[:i]
			}
			i, esc = i+end+1, true
			continue
		}
		r, n := utf8.DecodeRuneInString(line[i:])
		if w+cells(r) > cols {
			if esc {
				return line[:i] + "\x1b[0m"
			}
			return line[:i]
		}
		w += cells(r)
		i += n
	}
	return line
}

// cells is how many cells r takes at a terminal: two for the East Asian
// wide and full-width ranges (CJK, Hangul, full-width forms, most emoji),
// one otherwise. Control characters never reach a frame (Escape).
func cells(r rune) int {
	for _, wide := range [][2]rune{
		{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
		{0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F}, {0xFF00, 0xFF60},
		{0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
	} {
		if r >= wide[0] && r <= wide[1] {
			return 2
		}
	}
	return 1
}
