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

// Many short words flood as well as one long one: the whole text is
// bounded, and its tail (where a message's hint is) is kept.
func TestCutLongManyWords(t *testing.T) {
	in := "bad --node " + strings.Repeat("ab ", 40000) + "(see zklock revoke --help)"
	got := CutLong(in)
	if n := utf8.RuneCountInString(got); n > longText+40 {
		t.Errorf("CutLong of %d bytes of short words kept %d runes, want at most about %d", len(in), n, longText)
	}
	if !strings.HasPrefix(got, "bad --node ab ab") || !strings.HasSuffix(got, "ab ab (see zklock revoke --help)") ||
		!strings.Contains(got, " bytes cut]…") {
		t.Errorf("CutLong of many short words = %.80q…%.80q", got, got[len(got)-80:])
	}
}
