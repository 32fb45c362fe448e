package doctor

import (
	"bytes"
	"errors"
	"testing"
)

// TestChecklist: one line per check, the subjects in one column; ✓, ✗
// and ! (a warning) on a terminal, plain ASCII otherwise, and colour only when asked.
func TestChecklist(t *testing.T) {
	checks := []Check{
		{Subject: "zk1:2181", Detail: "reachable"},
		{Subject: "session", Err: errors.New("no session\nwithin 5s")},
		{Subject: "members", Err: &Warning{Text: "not a member: zk9:2181"}},
	}
	for _, tc := range []struct {
		symbols, color bool
		want           string
	}{
		{false, false, "ok   zk1:2181  reachable\nFAIL session   no session within 5s\nwarn members   not a member: zk9:2181\n"},
		{true, false, "✓ zk1:2181  reachable\n✗ session   no session within 5s\n! members   not a member: zk9:2181\n"},
		{true, true, "\x1b[32;1m✓\x1b[0;22m zk1:2181  reachable\n\x1b[31;1m✗\x1b[0;22m session   no session within 5s\n\x1b[33;1m!\x1b[0;22m members   not a member: zk9:2181\n"},
	} {
		var out bytes.Buffer
		o := Options{Out: &out, Symbols: tc.symbols, Color: tc.color}
		o.Conn.ConnString.Servers = []string{"zk1:2181"}
		l := newChecklist(o)
		for _, c := range checks {
			l.write(c)
		}
		if out.String() != tc.want {
			t.Errorf("symbols %v, color %v:\n%q\nwant\n%q", tc.symbols, tc.color, out.String(), tc.want)
		}
	}
}
