package cmd

import (
	"regexp"
	"strings"
	"testing"
)

// TestPlain: --help shows Markdown's code spans unquoted and links as their
// text, as a regular expression would have it, for every documented
// reference and for the awkward cases.
func TestPlain(t *testing.T) {
	link := regexp.MustCompile(`\[([^]]*)\]\([^)]*\)`)
	want := func(s string) string { return strings.ReplaceAll(link.ReplaceAllString(s, "$1"), "`", "") }
	cases := []string{
		"", "plain", "`code` and `more`", "see [the guide](docs/guide/run.md) and [`x`](y)",
		"[a] b](c)", "[unclosed", "[a](b", "a [b](c) d [e](f)", "[](x)", "[a](b)c)", "x[y]z",
	}
	for _, rs := range [][]reference{exitCodes, environment, commandVariables()} {
		for _, r := range rs {
			cases = append(cases, r.meaning)
		}
	}
	for _, c := range cases {
		if got := plain(c); got != want(c) {
			t.Errorf("plain(%q) = %q, want %q", c, got, want(c))
		}
	}
}
