package view

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutLong(t *testing.T) {
	long := strings.Repeat("a", 100000)
	for _, tc := range []struct{ in, want string }{
		{"short words stay", "short words stay"},
		{strings.Repeat("b", longWord), strings.Repeat("b", longWord)},
		{`invalid node "` + long + `" (see --help)`,
			`invalid node "` + strings.Repeat("a", keepHead-1) + "…[99562 bytes cut]…" + strings.Repeat("a", keepTail-1) + `" (see --help)`},
		{"x  " + long + "\ty", "x  " + strings.Repeat("a", keepHead) + "…[99560 bytes cut]…" + strings.Repeat("a", keepTail) + "\ty"},
	} {
		if got := CutLong(tc.in); got != tc.want {
			t.Errorf("CutLong(%.40q…) = %.300q, want %.300q", tc.in, got, tc.want)
		}
	}
	// Multi-byte runes are never split.
	got := CutLong(strings.Repeat("é", 1000))
	if !utf8.ValidString(got) || !strings.Contains(got, "[1120 bytes cut]") {
		t.Errorf("CutLong of 1000 runes of é: %q", got)
	}
}
