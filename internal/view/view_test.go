package view

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/tree"
)

func entries() []recipe.Entry {
	since := time.Date(2026, 11, 21, 3, 0, 1, 0, time.UTC)
	mine, _ := recipe.ParseContender("_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lock-0000000041")
	kazoo, _ := recipe.ParseContender("0123456789abcdef0123456789abcdef__rlock__0000000042")
	lease, _ := recipe.ParseContender("_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lease-0000000043")
	stuck, _ := recipe.ParseContender("_c_0f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lock-0000000007")
	return []recipe.Entry{
		{Contender: mine, Path: "/locks/a", Position: 1, Holding: true, Session: 0x10,
			Data: owner.Owner{Zklock: "v1", Host: "web-3", PID: 81233, User: "deploy", Cmd: []string{"sh", "-c", "echo hi"}, Since: since}.Encode()},
		{Contender: kazoo, Path: "/locks/a", Position: 2, Data: []byte("worker-7"), Created: since, Session: 0x11},
		{Contender: lease, Path: "/locks/s", Under: "leases", Position: 1, Holding: true, Limit: 3, Session: 0x12,
			Data: owner.Owner{Zklock: "v1", Host: "h", PID: 1, Cmd: []string{"x"}, Since: since, Limit: 3}.Encode()},
		{Contender: stuck, Path: "/locks/p", Position: 1, Holding: true, Created: since, Data: []byte("left")},
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 11, 21, 3, 12, 5, 0, time.UTC)
	if err := Table(&b, entries(), true, false, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"PATH", "FLAVOR",
		`holding\s+exclusive\s+curator\s+web-3\s+81233\s+deploy`,
		`\(12m4s ago\)`, `sh -c 'echo hi'`,
		`waiting\s+shared\s+kazoo\s+worker-7\s+-\s+-`,
		`\(not zklock\)`,
		`/locks/s\s+1\s+holding\s+lease/3\s.*\sleases/_c_2f1c0c5e`,
		`/locks/p\s+1\s+holding \(persistent\)\s+exclusive`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a terminal")
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	es := entries()
	if err := TreeJSON(&b, tree.Tree{Queues: []tree.Queue{{Queue: recipe.Queue{Path: "/locks/a", Entries: es[:2]}},
		{Queue: recipe.Queue{Path: "/locks/s", Recipe: recipe.RecipeSemaphore, Limit: 3, Entries: es[2:3]}},
		{Queue: recipe.Queue{Path: "/locks/p", Entries: es[3:]}}}}); err != nil {
		t.Fatal(err)
	}
	var listed ListJSON
	if err := json.Unmarshal(b.Bytes(), &listed); err != nil || listed.Skipped == nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	qs := listed.Locks
	e := qs[0].Entries
	if len(qs) != 3 || len(e) != 2 || qs[0].Recipe != "lock" || e[0].Persistent || e[0].State != "holding" || !e[0].Zklock || e[0].Flavor != "curator" ||
		e[0].PID != 81233 || e[0].Session != "0x10" || e[1].Zklock || e[1].Client != "worker-7" ||
		e[1].Mode != "shared" || e[1].Flavor != "kazoo" {
		t.Errorf("JSON = %+v", qs)
	}
	if s := qs[1]; s.Recipe != "semaphore" || s.Limit != 3 || s.Entries[0].Node != "leases/_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lease-0000000043" ||
		s.Entries[0].Mode != "lease" || s.Entries[0].Path != "/locks/s" {
		t.Errorf("semaphore JSON = %+v", s)
	}
	if p := qs[2].Entries[0]; !p.Persistent || p.Session != "0x0" || p.State != "holding" {
		t.Errorf("persistent contender JSON = %+v", p)
	}
	b.Reset()
	if err := EntriesJSON(&b, nil); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("no entries: %q %v", b.String(), err)
	}
}

// TestTableColourAligned: colour adds escape codes around cells that are
// already aligned, so without them the coloured table is the plain one.
func TestTableColourAligned(t *testing.T) {
	now := time.Date(2026, 11, 21, 3, 12, 5, 0, time.UTC)
	var plain, coloured bytes.Buffer
	if err := Table(&plain, entries(), true, false, now); err != nil {
		t.Fatal(err)
	}
	if err := Table(&coloured, entries(), true, true, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(coloured.String(), "\x1b[") {
		t.Fatal("no colour when asked for")
	}
	stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(coloured.String(), "")
	if stripped != plain.String() {
		t.Errorf("coloured table, without its escape codes:\n%s\nplain table:\n%s", stripped, plain.String())
	}
}

// TestForgotten: the deleted record's time is the server's, in UTC
// whatever the local zone, and its author is named as list names it.
func TestForgotten(t *testing.T) {
	at := time.Date(2026, 11, 21, 3, 0, 4, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		s    success.Record
		want string
	}{
		{success.Record{Path: "/locks/report", At: at, NodeData: owner.NodeData{ByZklock: true,
			Owner: owner.Owner{Zklock: "v1", Host: "web-3", PID: 81233, Cmd: []string{"./report.sh"}}}},
			"forgot the last success at /locks/report: 2026-11-21T02:00:04Z on web-3 pid 81233 (./report.sh)"},
		{success.Record{Path: "/locks/report", At: at, NodeData: owner.NodeData{Raw: "cron\x1b[2J"}},
			`forgot the last success at /locks/report: 2026-11-21T02:00:04Z by cron\x1b[2J`},
	} {
		if got := Forgotten(tc.s); got != tc.want {
			t.Errorf("Forgotten = %q, want %q", got, tc.want)
		}
	}
}

// TestHugeNodeData: a holder whose data is as large as the server allows
// (1 MB of short words, escapes and newlines) is shown in a bounded line
// by the table, by Who (busy lines, the wait's status) and by the success
// lines, never whole.
func TestHugeNodeData(t *testing.T) {
	huge := strings.Repeat("ab \x1b[31m\n", 1<<20/9)
	es := entries()
	es[1].Data = []byte(huge)
	d := owner.Decode(es[0].Data)
	d.Owner.Host = huge
	d.Owner.Cmd = []string{"sh", "-c", huge}
	es[0].Data = d.Owner.Encode()
	d0, d1 := owner.Decode(es[0].Data), owner.Decode(es[1].Data)
	var b bytes.Buffer
	now := time.Date(2026, 11, 21, 3, 12, 5, 0, time.UTC)
	if err := Table(&b, es, true, false, now); err != nil {
		t.Fatal(err)
	}
	const bound = 40 << 10 // bytes: a few cut cells, each escaped
	if n := b.Len(); n > bound || strings.Count(b.String(), "\n") != len(es)+1 {
		t.Errorf("table of a 1 MB holder: %d bytes in %d lines, want at most %d in %d", n, strings.Count(b.String(), "\n"), bound, len(es)+1)
	}
	for name, s := range map[string]string{
		"Who of a foreign client": Who(es[1].Contender, d1),
		"Who of zklock":           Who(es[0].Contender, d0),
		"LastSuccess":             LastSuccess(success.Record{Path: "/locks/a", At: now, NodeData: d1}, now),
		"Forgotten":               Forgotten(success.Record{Path: "/locks/a", At: now, NodeData: d0}),
	} {
		if len(s) > bound/4 {
			t.Errorf("%s of a 1 MB holder is %d bytes, want at most %d", name, len(s), bound/4)
		}
	}
}
