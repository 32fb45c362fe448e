package view

import "testing"

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"10.0.0.7", "10.0.0.7"},
		{"zürich-web ☃", "zürich-web ☃"},
		{`C:\path`, `C:\path`},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u009b31m\u0085", `\u009b31m\u0085`},
		{"evil\u202etxt.exe\u2028", `evil\u202etxt.exe\u2028`},
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`},
		{"ok é then \x1b", `ok é then \x1b`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
