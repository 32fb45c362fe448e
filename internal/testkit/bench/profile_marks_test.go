package bench

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseMarks(t *testing.T) {
	start := time.Unix(100, 0)
	ns := func(ms float64) int64 { return start.UnixNano() + int64(ms*1e6) }
	// A run that dialed twice: the first mark of each phase counts.
	text := "dialed\t" + itoa(ns(5)) + "\nacquired\t" + itoa(ns(6.5)) + "\ndialed\t" + itoa(ns(9)) + "\ncommand\t" + itoa(ns(7)) + "\n"
	got, err := parseMarks(text, start)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{5, 6.5, 7, -1, -1} // released not marked; exit is the driver's
	if len(got) != len(want) {
		t.Fatalf("parseMarks = %v, want %v", got, want)
	}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s at %v ms, want %v", profilePhases[i].mark, got[i], want[i])
		}
	}
	for _, bad := range []string{"dialed 123\n", "dialed\tsoon\n"} {
		if _, err := parseMarks(bad, start); err == nil {
			t.Errorf("parseMarks(%q) succeeded, want an error", bad)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRenderMarksProfile renders the fixture with a profile timed by marks:
// the page says how it was timed, and nothing about -v.
func TestRenderMarksProfile(t *testing.T) {
	res, err := readResults(filepath.Join("testdata", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	p.Marks = true
	p.Phases = nil
	for i, ph := range profilePhases {
		p.Phases = append(p.Phases, ProfilePhase{Mark: ph.mark, Meaning: ph.meaning, AtMS: float64(5 + i), DeltaMS: 1, Seen: p.Runs})
	}
	var b bytes.Buffer
	if err := newPage(res).execute(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"Medians of 50 runs of `zklock run -- true`, timed by the marks zklock appends",
		"| dialed | 5.00 | 1.00 | process start, Go runtime",
		"| **total** | 10.3 | | whole process |",
		"From the established session to the moment the command starts, the ZooKeeper round trips and the work between them take 2.00 ms together.",
		"What is left after the release, up to the process's exit, takes 1.00 ms.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if i := strings.Index(page, "## Where an uncontended"); i < 0 || strings.Contains(page[i:strings.Index(page, "## Micro")], "-v") {
		t.Errorf("the profile section mentions -v or is missing")
	}
}
