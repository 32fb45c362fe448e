package view

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes text that other clients wrote (node data, node names, paths)
// safe to print on a terminal. It replaces every control character (C0,
// DEL, C1), the Unicode controls that reorder or break lines (bidi
// overrides and isolates, line and paragraph separators) and every byte
// that is not valid UTF-8 by a visible escape: \n, \t, \r, \x1b, \u009b,
// \u202e, \xff. A terminal then shows what the bytes are instead of obeying
// them: no escape sequence sets a title or clears the screen, and no
// newline forges a table row or a message line. Backslashes are kept as
// they are: the result is for people; JSON output stays exact.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			// Non-ASCII is rare in lock data; check it rune by rune.
			if c < 0x80 || !utf8.ValidString(s) {
				return true
			}
			for _, r := range s[i:] {
				if r < 0x20 || r == 0x7f || unsafeRune(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// unsafeRune reports the non-ASCII runes a terminal would act on rather
// than show: C1 controls (U+009B is CSI, U+009D starts an OSC title),
// bidi controls that make text read differently than it is stored, and
// the line and paragraph separators.
func unsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) ||
		r == 0x061c || r == 0x200e || r == 0x200f ||
		(r >= 0x2028 && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
