package zkcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForeignRaces: go-zookeeper's known race is passed over, any other
// report is printed and counted.
func TestForeignRaces(t *testing.T) {
	known := "WARNING: DATA RACE\nWrite at 0x1 by goroutine 56:\n  github.com/go-zookeeper/zk.(*Conn).recvLoop()\n\nPrevious read at 0x1 by goroutine 12:\n  github.com/go-zookeeper/zk.(*Conn).sendSetWatches()\n"
	ours := "WARNING: DATA RACE\nWrite at 0x2 by goroutine 7:\n  github.com/zklock/zklock/internal/runner.(*Options).guard()\n"
	sep := "==================\n"
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("race.101", sep+known+sep)
	var out strings.Builder
	if n := foreignRaces(dir, &out); n != 0 || out.Len() != 0 {
		t.Fatalf("the known race counted: %d, %q", n, out.String())
	}
	write("race.102", sep+known+sep+sep+ours+sep)
	if n := foreignRaces(dir, &out); n != 1 || !strings.Contains(out.String(), "guard()") || strings.Contains(out.String(), "sendSetWatches") {
		t.Fatalf("want only zklock's own race, got %d:\n%s", n, out.String())
	}
}
