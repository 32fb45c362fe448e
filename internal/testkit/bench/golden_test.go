package bench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// TestRenderGolden renders the report and its plots from a fixed
// results.json and compares every file with its golden copy. The fixture
// has a failed cell in each section, skipped contended cells, notes and a
// busy machine, so every branch of the template is on the page.
func TestRenderGolden(t *testing.T) {
	res, err := readResults(filepath.Join("testdata", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := render(res, filepath.Join(dir, "benchmarks.md"), dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"benchmarks.md", "uncontended.svg", "throughput.svg", "handoff.svg", "queue.svg"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s (rerun with -update if the change is meant):\n%s", name, golden, firstDiff(string(want), string(got)))
		}
	}
}

// firstDiff shows the first line where want and got part.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d", i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no line differs)"
}
