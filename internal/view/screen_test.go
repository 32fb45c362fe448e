package view

import (
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/recipe"
)

// TestFitEntries: a queue longer than the screen keeps every holder, then
// the first waiters in order, with a line left for the rest; a queue that
// fits keeps all, and the lines below it.
func TestFitEntries(t *testing.T) {
	q := func(holding, waiting int) []recipe.Entry {
		var es []recipe.Entry
		for i := range holding + waiting {
			es = append(es, recipe.Entry{Position: i + 1, Holding: i < holding})
		}
		return es
	}
	for _, tc := range []struct {
		name        string
		es          []recipe.Entry
		rows, lines int
		wantPos     []int
		wantCut     Cut
		wantMore    string
	}{
		{"fits", q(1, 3), 6, 1, []int{1, 2, 3, 4}, Cut{}, ""},
		{"one line too many", q(1, 3), 5, 2, []int{1, 2, 3}, Cut{Waiting: 1, Lines: 2}, "… and 3 more: 1 waiting, 2 last successes"},
		{"waiters cut", q(1, 200), 18, 0, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Cut{Waiting: 185}, "… and 185 more waiting"},
		{"shared holders after waiters keep their place", append(q(0, 3), recipe.Entry{Position: 4, Holding: true}), 4, 0, []int{1, 4}, Cut{Waiting: 2}, "… and 2 more waiting"},
		{"holders beyond the screen", q(5, 5), 4, 0, []int{1, 2}, Cut{Holding: 3, Waiting: 5}, "… and 8 more: 3 holding, 5 waiting"},
	} {
		got, cut := FitEntries(tc.es, tc.rows, tc.lines)
		var pos []int
		for _, e := range got {
			pos = append(pos, e.Position)
		}
		if !slices.Equal(pos, tc.wantPos) || cut != tc.wantCut || cut.More() != tc.wantMore {
			t.Errorf("%s: positions %v, cut %+v (%q); want %v, %+v (%q)", tc.name, pos, cut, cut.More(), tc.wantPos, tc.wantCut, tc.wantMore)
		}
		n := 1 + len(got) + tc.lines - cut.Lines
		if cut.More() != "" {
			n++
		}
		if n > tc.rows {
			t.Errorf("%s: %d lines, more than the %d rows", tc.name, n, tc.rows)
		}

	}
}

// TestFitScreen: a frame is cut to the screen's rows and columns, colours
// and wide characters counted as they show, and ends without a newline.
func TestFitScreen(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		s           Screen
		want        string
	}{
		{"unknown size", "a\nb\n", Screen{}, "a\nb\n"},
		{"fits", "ab\ncd\n", Screen{Rows: 2, Cols: 2}, "ab\ncd"},
		{"too tall", "a\nb\nc\n", Screen{Rows: 2, Cols: 5}, "a\nb"},
		{"too wide", "abcdef\n", Screen{Rows: 2, Cols: 4}, "abcd"},
		{"colour takes no cells", "\x1b[32mholding\x1b[0m x\n", Screen{Rows: 1, Cols: 9}, "\x1b[32mholding\x1b[0m x"},
		{"cut in colour is reset", "\x1b[32mholding\x1b[0m\n", Screen{Rows: 1, Cols: 4}, "\x1b[32mhold\x1b[0m"},
		{"wide characters take two", "日本語ab\n", Screen{Rows: 1, Cols: 5}, "日本"},
	} {
		if got := FitScreen(tc.frame, tc.s); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if got := FitScreen(tc.frame, tc.s); tc.s.Rows > 0 && strings.HasSuffix(got, "\n") {
			t.Errorf("%s: ends with a newline, which scrolls a full screen", tc.name)
		}
	}
}
