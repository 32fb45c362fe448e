package promfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/files"
)

func value(t *testing.T, name string, f family, l labels) (float64, bool) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := s[f.name][l]
	return v, ok
}

// TestRecord: counters add up over runs, the last success stays when a
// later run fails or is skipped, other jobs' series stay as they were,
// and a path with the characters the format escapes reads back as it was
// written.
func TestRecord(t *testing.T) {
	name := filepath.Join(t.TempDir(), "zklock.prom")
	t0 := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	odd := `/locks/a"b\c`
	runs := []Run{
		{Paths: []string{"/locks/a", "/locks/b"}, End: t0, Outcome: "success", Wait: time.Second, Hold: 2 * time.Second, Held: true},
		{Paths: []string{odd}, End: t0.Add(time.Minute), Outcome: "busy", ExitCode: 75},
		{Paths: []string{"/locks/a"}, End: t0.Add(time.Hour), Outcome: "failure", ExitCode: 3, Wait: 5 * time.Second, Hold: time.Second, Held: true},
		{Paths: []string{"/locks/a"}, End: t0.Add(2 * time.Hour), Outcome: "skipped", ExitCode: 75},
		{Paths: []string{"/pools/p"}, End: t0, Outcome: "success", Hold: 3 * time.Second, Held: true, Resources: []string{"env-a", "env-b"}},
		{Paths: []string{"/pools/p"}, End: t0.Add(time.Minute), Outcome: "success", Hold: 4 * time.Second, Held: true, Resources: []string{"env-b"}},
	}
	for _, r := range runs {
		if err := Record(name, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		f    family
		l    labels
		want float64
	}{
		{runsTotal, labels{path: "/locks/a", outcome: "success"}, 1},
		{runsTotal, labels{path: "/locks/a", outcome: "failure"}, 1},
		{runsTotal, labels{path: "/locks/a", outcome: "skipped"}, 1},
		{runsTotal, labels{path: "/locks/a", outcome: "lost"}, 0},
		{runsTotal, labels{path: odd, outcome: "busy"}, 1},
		{lastSuccess, labels{path: "/locks/a"}, seconds(t0)},
		{lastRun, labels{path: "/locks/a"}, seconds(t0.Add(2 * time.Hour))},
		{lastExit, labels{path: "/locks/a"}, 75},
		{lastWait, labels{path: "/locks/a"}, 0},
		{lastWait, labels{path: "/locks/b"}, 1},
		{lastHold, labels{path: "/locks/a"}, 1}, // kept from the last run that held it
		{lastHold, labels{path: "/locks/b"}, 2},
		{lastExit, labels{path: odd}, 75},
		// A pool's member keeps the hold of the last run that held it.
		{lastHold, labels{path: "/pools/p", resource: "env-a"}, 3},
		{lastHold, labels{path: "/pools/p", resource: "env-b"}, 4},
		{lastHold, labels{path: "/pools/p"}, 4},
		{runsTotal, labels{path: "/pools/p", outcome: "success"}, 2},
	} {
		if got, ok := value(t, name, tc.f, tc.l); !ok || got != tc.want {
			t.Errorf("%s%v = %v (%v), want %v", tc.f.name, tc.l, got, ok, tc.want)
		}
	}
	if _, ok := value(t, name, runsTotal, labels{path: "/locks/b", outcome: "success"}); ok {
		t.Errorf("runs of a job are counted under its first path only")
	}
	if _, ok := value(t, name, lastSuccess, labels{path: odd}); ok {
		t.Errorf("a job that never succeeded has a last success")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{path="/locks/a\"b\\c",outcome="busy"} 1`) {
		t.Errorf("the odd path is not escaped as the format says:\n%s", b)
	}
	for _, f := range families {
		if !strings.Contains(string(b), "# HELP "+f.name+" ") || !strings.Contains(string(b), "# TYPE "+f.name+" "+f.kind+"\n") {
			t.Errorf("no HELP and TYPE for %s", f.name)
		}
	}
	st, err := os.Stat(name)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode is %v (%v), want 0644 for node_exporter's user to read it", st.Mode(), err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(name), ".*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestRecordConcurrent: runs that end at once, of one job and of
// several, lose no increment: each holds the sidecar's lock (its own open
// file, as separate processes have) for its read, add and rename.
func TestRecordConcurrent(t *testing.T) {
	name := filepath.Join(t.TempDir(), "zklock.prom")
	const jobs, runs = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, jobs*runs)
	for j := range jobs {
		for range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- Record(name, Run{Paths: []string{fmt.Sprintf("/locks/%d", j)}, End: time.Now(), Outcome: "success"})
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for j := range jobs {
		if got, _ := value(t, name, runsTotal, labels{path: fmt.Sprintf("/locks/%d", j), outcome: "success"}); got != runs {
			t.Errorf("job %d: %v runs counted, want %d", j, got, runs)
		}
	}
}

// TestRecordFails: a directory that cannot be written is an error to
// report, and the file is left as it was.
func TestRecordFails(t *testing.T) {
	if err := Record(filepath.Join(t.TempDir(), "missing", "zklock.prom"), Run{Paths: []string{"/a"}, Outcome: "success"}); err == nil {
		t.Error("a file in a directory that does not exist was written")
	}
	if err := Record(filepath.Join(t.TempDir(), "zklock.prom"), Run{Outcome: "success"}); err == nil {
		t.Error("a run without a path was recorded")
	}
}

// TestParseSample: what write writes, read back; what it never writes,
// dropped.
func TestParseSample(t *testing.T) {
	for _, tc := range []struct {
		line string
		name string
		l    labels
		v    float64
		ok   bool
	}{
		{`zklock_runs_total{path="/a",outcome="success"} 3`, "zklock_runs_total", labels{path: "/a", outcome: "success"}, 3, true},
		{`zklock_last_exit_code{path="/a\\\"b\nc"} 1`, "zklock_last_exit_code", labels{path: "/a\\\"b\nc"}, 1, true},
		{`zklock_last_run_timestamp_seconds{path="/a"} 1795607052.238`, "zklock_last_run_timestamp_seconds", labels{path: "/a"}, 1795607052.238, true},
		{`# HELP zklock_runs_total {path="x"} 1`, "", labels{}, 0, false},
		{`zklock_runs_total{path="/a} 3`, "", labels{}, 0, false},
		{`zklock_runs_total{path="/a"} x`, "zklock_runs_total", labels{path: "/a"}, 0, false},
		{`garbage`, "", labels{}, 0, false},
	} {
		name, l, v, ok := parseSample(tc.line)
		if ok != tc.ok || (ok && (name != tc.name || l != tc.l || v != tc.v)) {
			t.Errorf("parseSample(%q) = %q %v %v %v", tc.line, name, l, v, ok)
		}
	}
}

// TestRecordRefusesEndlessFiles: a metrics file that is not a regular
// file (a FIFO named *.prom, a link to a device) is an error at once: it
// must neither hang zklock after its command, waiting for a writer that
// never comes, nor fill its memory with a read that never ends.
func TestRecordRefusesEndlessFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.prom")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.prom")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	// Through a link, the file refused is the one linked to, and no
	// sidecar is made beside it.
	elsewhere := t.TempDir()
	linked := filepath.Join(elsewhere, "fifo")
	if err := syscall.Mkfifo(linked, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.prom")
	if err := os.Symlink(linked, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fifo, zero, link} {
		done := make(chan error, 1)
		go func() { done <- Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}) }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: recorded", name)
			}
		case <-time.After(5 * time.Second):
			// Let the read end: a writer for the FIFO, which closes at
			// once, or the test's end for /dev/zero.
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.Close()
			}
			t.Fatalf("%s: Record still reading after 5s", name)
		}
	}
	if _, err := os.Lstat(sidecarOf(linked)); err == nil {
		t.Errorf("a sidecar was made beside %s, which was refused", linked)
	}
	// A FIFO in the sidecar's place: opened without waiting for a writer.
	name := filepath.Join(t.TempDir(), "zklock.prom")
	if err := syscall.Mkfifo(sidecarOf(name), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(sidecarOf(name), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("Record still opening a FIFO sidecar after 5s")
	}
}

// sidecarOf is the sidecar of the file name.
func sidecarOf(name string) string {
	dir, base := filepath.Split(name)
	return filepath.Join(dir, "."+base+".lock")
}

// TestRecordInvalidUTF8: a path that is not UTF-8 is written under a
// label the text format can carry, and without loss: two such paths keep
// two labels, and neither is the label of a path ZooKeeper takes. Written
// as given, one such line made node_exporter (and promtool) reject the
// whole file; written with U+FFFD for each bad byte, /bad\xfe and
// /bad\xff were counted as one.
func TestRecordInvalidUTF8(t *testing.T) {
	name := filepath.Join(t.TempDir(), "zklock.prom")
	// A file an older zklock left behind heals too.
	if err := os.WriteFile(name, []byte("zklock_last_exit_code{path=\"/old\xfe\"} 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/bad\xff", "/good", "/bad\xff", "/bad\xfe", "/bad\uFFFDxff"} {
		if err := Record(name, Run{Paths: []string{p}, End: time.Now(), ExitCode: 64, Outcome: "error"}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(data) {
		t.Errorf("the file is not UTF-8:\n%s", data)
	}
	for _, tc := range []struct {
		path string
		want float64
	}{{"/bad\xff", 2}, {"/bad\xfe", 1}, {"/bad\uFFFDxff", 1}, {"/good", 1}} {
		if got, _ := value(t, name, runsTotal, labels{path: pathLabel(tc.path), outcome: "error"}); got != tc.want {
			t.Errorf("%q counts %v runs, want %v", tc.path, got, tc.want)
		}
	}
	seen := map[string]string{}
	for _, p := range []string{"/bad\xff", "/bad\xfe", "/bad\uFFFDxff", "/bad\uFFFD", "/bad\uFFFDu"} {
		l := pathLabel(p)
		if other, ok := seen[l]; ok {
			t.Errorf("%q and %q share the label %q", p, other, l)
		}
		seen[l] = p
	}
	if got := pathLabel("/locks/ünïcode"); got != "/locks/ünïcode" {
		t.Errorf("a UTF-8 path's label is %q", got)
	}
}

// TestRecordCap: past maxPaths, the paths whose job ran longest ago lose
// their series, and the file stays bounded, instead of refusing every job
// once it reached the size files.Metrics reads.
func TestRecordCap(t *testing.T) {
	s := series{}
	t0 := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	for i := range 10 {
		s.add(Run{Paths: []string{fmt.Sprintf("/job%d", i), fmt.Sprintf("/job%d/second", i)}, End: t0.Add(time.Duration(i) * time.Minute), Outcome: "success"})
	}
	s.trim(15)
	kept := map[string]bool{}
	for _, f := range families {
		for l := range s[f.name] {
			kept[l.path] = true
		}
	}
	if len(kept) != 15 {
		t.Fatalf("%d paths kept, want 15: %v", len(kept), kept)
	}
	for i := range 10 {
		if !kept[fmt.Sprintf("/job%d", i)] {
			t.Errorf("/job%d was dropped before paths that never named a job", i)
		}
	}
	s.trim(5)
	for i := range 10 {
		if kept := s[lastRun.name][labels{path: fmt.Sprintf("/job%d", i)}] != 0; kept != (i >= 5) {
			t.Errorf("/job%d kept %v after a trim to 5 paths", i, kept)
		}
	}
	// A full file: the cap's worth of paths fits in what is read back.
	big := series{}
	for i := range maxPaths + 10 {
		big.add(Run{Paths: []string{fmt.Sprintf("/locks/a-rather-long-name-for-a-job-%06d", i)}, End: t0.Add(time.Duration(i) * time.Second), Outcome: "success", Held: true})
	}
	big.trim(maxPaths)
	if n := len(big.text()); int64(n) > files.Metrics.Max/2 {
		t.Errorf("%d paths take %d bytes, over half of the %d read back", maxPaths, n, files.Metrics.Max)
	}
}
