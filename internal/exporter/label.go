package exporter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxLabel is the most bytes of other clients' text kept in one label
// value: enough for a host name or a command's name, not for a payload
// that would bloat every scrape.
const maxLabel = 128

// labelValue makes text of unknown origin a label value Prometheus takes
// (valid UTF-8) without losing what it said: a byte that is not UTF-8
// becomes \xNN, and a backslash becomes \\ so that \xNN is never
// ambiguous. Text longer than maxLabel is cut on a rune boundary and ends
// with "…".
func labelValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
		if b.Len() > maxLabel {
			return cut(b.String())
		}
	}
	return b.String()
}

// cut shortens a valid UTF-8 s to at most maxLabel bytes with its mark.
func cut(s string) string {
	const mark = "…"
	end := maxLabel - len(mark)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + mark
}

// quote writes a label value in the text format's quotes: backslash,
// double quote and line feed escaped, as the format asks.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
