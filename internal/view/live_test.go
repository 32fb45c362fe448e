package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/tree"
)

// TestLiveHeader: the time of the last change, and the connection's loss
// while it lasts; what another client named is escaped.
func TestLiveHeader(t *testing.T) {
	changed := time.Date(2026, 11, 21, 3, 12, 6, 0, time.Local)
	if got, want := LiveHeader("/locks and below", changed, time.Time{}), "watching /locks and below; last change 03:12:06"; got != want {
		t.Errorf("LiveHeader = %q, want %q", got, want)
	}
	down := changed.Add(3 * time.Second)
	if got, want := LiveHeader("/locks", changed, down), "watching /locks; last change 03:12:06; disconnected since 03:12:09, retrying"; got != want {
		t.Errorf("LiveHeader = %q, want %q", got, want)
	}
	if got := LiveHeader("/a\x1b[2J", changed, time.Time{}); strings.Contains(got, "\x1b") {
		t.Errorf("LiveHeader passes an escape through: %q", got)
	}
	var b bytes.Buffer
	if err := Redraw(&b, "frame\n"); err != nil || b.String() != "\x1b[H\x1b[2Jframe\n" {
		t.Errorf("Redraw wrote %q, %v", b.String(), err)
	}
}

// TestJSONLines: a live view's snapshot is --json's shape on one line.
func TestJSONLines(t *testing.T) {
	es := entries()
	tr := tree.Tree{Queues: []tree.Queue{{Queue: recipe.NewQueue("/locks/a", es[:2])}}}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"tree":    func(b *bytes.Buffer) error { return TreeJSONLine(b, tr) },
		"entries": func(b *bytes.Buffer) error { return EntriesJSONLine(b, es) },
	} {
		var line, indented bytes.Buffer
		if err := write(&line); err != nil {
			t.Fatal(err)
		}
		if name == "tree" {
			TreeJSON(&indented, tr)
		} else {
			EntriesJSON(&indented, es)
		}
		if strings.Count(line.String(), "\n") != 1 || !strings.HasSuffix(line.String(), "\n") {
			t.Errorf("%s: not one line: %q", name, line.String())
		}
		var a, b any
		if err := json.Unmarshal(line.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(indented.Bytes(), &b)
		if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
			t.Errorf("%s: the line says %s, --json %s", name, ja, jb)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
