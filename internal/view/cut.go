package view

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Message lines quote what a user typed (a flag's value, a node name) and
// what other clients wrote. A value of 100 KB would turn the one line a
// failure gets into a screenful that buries the reason and the hint after
// it, so each overlong word keeps its head and its tail, and says how much
// was left out between them: enough to recognise the value, never to
// flood the terminal or a log line's size limit.
// A value made of many short words (a command line, a holder's data full of
// spaces) floods as well as one long word, so the whole text is bounded
// too, keeping its tail, where a message's hint is.
const (
	longWord = 512 // runes in a word before it is cut: more than any real path
	keepHead = 320
	keepTail = 120

	longText     = 1024 // runes in the whole text, once its words are cut
	keepTextHead = 600
	keepTextTail = 360
)

// CutLong shortens every whitespace-separated word of s that is longer than
// longWord runes to its first keepHead and last keepTail runes, with
// "…[N bytes cut]…" between them; shorter words, and the whitespace between
// words, are kept as they are. If what is left is still longer than
// longText runes, it keeps the first keepTextHead and last keepTextTail
// runes of it the same way.
func CutLong(s string) string {
	if len(s) <= longWord {
		return s
	}
	return cut(cutWords(s), longText, keepTextHead, keepTextTail)
}

// cutWords cuts each overlong word of s.
func cutWords(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexAny(s, " \t\n")
		if i < 0 {
			i = len(s)
		}
		b.WriteString(cutWord(s[:i]))
		s = s[i:]
		j := 0
		for j < len(s) && strings.IndexByte(" \t\n", s[j]) >= 0 {
			j++
		}
		b.WriteString(s[:j])
		s = s[j:]
	}
	return b.String()
}

func cutWord(w string) string { return cut(w, longWord, keepHead, keepTail) }

// cut keeps the first head and last tail runes of w if it has more than
// limit runes.
func cut(w string, limit, head, tail int) string {
	n := utf8.RuneCountInString(w)
	if n <= limit {
		return w
	}
	head = runeOffset(w, head)
	tail = runeOffset(w, n-tail)
	return fmt.Sprintf("%s…[%d bytes cut]…%s", w[:head], tail-head, w[tail:])
}

// runeOffset is the byte offset of the n-th rune of s (invalid bytes count
// as one rune each, as range does).
func runeOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}
