package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestMarks(t *testing.T) {
	t.Setenv(marksEnv, "")
	if m := openMarks(); m != nil {
		t.Fatalf("openMarks without %s = %v, want nil", marksEnv, m)
	}
	var none *marks
	none.mark("dialed") // a nil *marks writes nothing and does not panic
	none.close()

	file := filepath.Join(t.TempDir(), "marks")
	t.Setenv(marksEnv, file)
	m := openMarks()
	m.mark("dialed")
	m.mark("acquired")
	m.close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("marks file has %d lines, want 2:\n%s", len(lines), b)
	}
	var last int64
	for i, want := range []string{"dialed", "acquired"} {
		phase, ns, _ := strings.Cut(lines[i], "\t")
		n, err := strconv.ParseInt(ns, 10, 64)
		if phase != want || err != nil || n < last {
			t.Errorf("line %d = %q, want %s, a tab and Unix nanoseconds not before the line above", i+1, lines[i], want)
		}
		last = n
	}
}
