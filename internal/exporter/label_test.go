package exporter

import (
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/follow"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/tree"
)

func TestLabelValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"web-1", "web-1"},
		{"ünï", "ünï"},
		{"a\xffb", `a\xffb`},
		{`a\xffb`, `a\\xffb`}, // text that reads like an escape stays apart from one
		{"\xc3", `\xc3`},
		{"a\"b\nc", "a\"b\nc"}, // quote escapes these
	} {
		if got := labelValue(c.in); got != c.want {
			t.Errorf("labelValue(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := labelValue(strings.Repeat("é", 200))
	if len(long) > maxLabel || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Errorf("a long value is %d bytes, valid %v: %q", len(long), utf8.ValidString(long), long)
	}
	if got := quote("a\"b\\c\nd"); got != `"a\"b\\c\nd"` {
		t.Errorf("quote = %s", got)
	}
}

// TestFamilies: the series of a tree with a held lock, its waiters, a
// hostile holder and more lock paths than the limit.
func TestFamilies(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	data := owner.Owner{Zklock: "1", Host: "h\"ost\n", PID: 42, Cmd: []string{"/usr/bin/back\\up", "x"},
		Acquired: now.Add(-90 * time.Second)}.Encode()
	q := func(p string, es ...recipe.Entry) tree.Queue {
		return tree.Queue{Queue: recipe.Queue{Path: p, Entries: es}}
	}
	st := state{read: true, state: stateConnected, lastOK: now, snap: follow.Snapshot{Changed: now, Tree: tree.Tree{Queues: []tree.Queue{
		q("/locks/a",
			recipe.Entry{Contender: recipe.Contender{Flavor: recipe.FlavorCurator}, Holding: true, Data: data, Created: now.Add(-100 * time.Second)},
			recipe.Entry{Created: now.Add(-30 * time.Second)},
			recipe.Entry{Created: now.Add(-10 * time.Second)}),
		q("/locks/b", recipe.Entry{Contender: recipe.Contender{Flavor: recipe.FlavorKazoo}, Holding: true, Data: []byte("10.0.0.\xff1"), Created: now.Add(-5 * time.Second)}),
		q("/locks/c"),
	}}}}
	var b strings.Builder
	if err := write(&b, families(st, now, 2)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, line := range []string{
		"zklock_exporter_up 1",
		`zklock_exporter_session_state{state="connected"} 1`,
		"zklock_exporter_lock_paths 3",
		"zklock_exporter_lock_paths_dropped 1",
		"zklock_exporter_contenders 4",
		`zklock_lock_holders{path="/locks/a"} 1`,
		`zklock_lock_waiters{path="/locks/a"} 2`,
		`zklock_lock_oldest_hold_seconds{path="/locks/a"} 90`,
		`zklock_lock_oldest_wait_seconds{path="/locks/a"} 30`,
		`zklock_lock_oldest_hold_seconds{path="/locks/b"} 5`,
		`zklock_lock_holder_info{path="/locks/a",host="h\"ost\n",pid="42",command="back\\\\up",flavor="curator"} 1`,
		`zklock_lock_holder_info{path="/locks/b",host="10.0.0.\\xff1",pid="",command="",flavor="kazoo"} 1`,
	} {
		if !strings.Contains(page, "\n"+line+"\n") {
			t.Errorf("no line %s in:\n%s", line, page)
		}
	}
	if strings.Contains(page, "/locks/c") {
		t.Errorf("a path beyond the limit is exported:\n%s", page)
	}
	if !utf8.ValidString(page) {
		t.Errorf("the page is not UTF-8")
	}
	// Prometheus's own linter takes it: the format, names and help.
	check := exec.Command("promtool", "check", "metrics")
	check.Stdin = strings.NewReader(page)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	down := st
	down.state = stateDisconnected
	b.Reset()
	if err := write(&b, families(down, now, 2)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nzklock_exporter_up 0\n") || !strings.Contains(b.String(), `zklock_exporter_session_state{state="disconnected"} 1`) {
		t.Errorf("disconnected, the page says:\n%s", b.String())
	}
}
