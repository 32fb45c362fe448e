package promfile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func value(t *testing.T, name string, f family, l labels) (float64, bool) {
	t.Helper()
	s, err := read(name)
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
		{runsTotal, labels{"/locks/a", "success"}, 1},
		{runsTotal, labels{"/locks/a", "failure"}, 1},
		{runsTotal, labels{"/locks/a", "skipped"}, 1},
		{runsTotal, labels{"/locks/a", "lost"}, 0},
		{runsTotal, labels{odd, "busy"}, 1},
		{lastSuccess, labels{path: "/locks/a"}, seconds(t0)},
		{lastRun, labels{path: "/locks/a"}, seconds(t0.Add(2 * time.Hour))},
		{lastExit, labels{path: "/locks/a"}, 75},
		{lastWait, labels{path: "/locks/a"}, 0},
		{lastWait, labels{path: "/locks/b"}, 1},
		{lastHold, labels{path: "/locks/a"}, 1}, // kept from the last run that held it
		{lastHold, labels{path: "/locks/b"}, 2},
		{lastExit, labels{path: odd}, 75},
	} {
		if got, ok := value(t, name, tc.f, tc.l); !ok || got != tc.want {
			t.Errorf("%s%v = %v (%v), want %v", tc.f.name, tc.l, got, ok, tc.want)
		}
	}
	if _, ok := value(t, name, runsTotal, labels{"/locks/b", "success"}); ok {
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
		if got, _ := value(t, name, runsTotal, labels{fmt.Sprintf("/locks/%d", j), "success"}); got != runs {
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
		{`zklock_runs_total{path="/a",outcome="success"} 3`, "zklock_runs_total", labels{"/a", "success"}, 3, true},
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
	if _, err := os.Lstat(sidecar(linked)); err == nil {
		t.Errorf("a sidecar was made beside %s, which was refused", linked)
	}
	// A FIFO in the sidecar's place: opened without waiting for a writer.
	name := filepath.Join(t.TempDir(), "zklock.prom")
	if err := syscall.Mkfifo(sidecar(name), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(sidecar(name), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("Record still opening a FIFO sidecar after 5s")
	}
}

// TestRecordThroughLink: a metrics file named through a symbolic link (a
// file kept elsewhere, linked into the collector's directory) is updated
// where the link points, and the link stays: replacing the link with a
// file of its own would leave the collector reading a copy that no later
// run updates, while runs naming the target count apart from runs
// naming the link.
func TestRecordThroughLink(t *testing.T) {
	target := filepath.Join(t.TempDir(), "zklock.prom")
	link := filepath.Join(t.TempDir(), "zklock.prom")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{link, target, link} {
		if err := Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if got, _ := value(t, target, runsTotal, labels{"/a", "success"}); got != 3 {
		t.Errorf("the target counts %v runs, want 3", got)
	}
}

// TestRecordInvalidUTF8: a run refused for a lock path that is not UTF-8
// is still counted, under a label the text format can carry. Written as
// given, that one line made node_exporter (and promtool) reject the whole
// file, every job's series with it, and every later run wrote it back.
func TestRecordInvalidUTF8(t *testing.T) {
	name := filepath.Join(t.TempDir(), "zklock.prom")
	// A file such a run left behind heals too.
	if err := os.WriteFile(name, []byte("zklock_last_exit_code{path=\"/old\xfe\"} 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/bad\xff", "/good", "/bad\xff"} {
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
	if got, _ := value(t, name, runsTotal, labels{"/bad\uFFFD", "error"}); got != 2 {
		t.Errorf("the refused runs count %v, want 2", got)
	}
}

// TestRecordOthersSidecar: the sidecar a run of another user left is
// readable by everyone, and writable by its owner alone. flock(2) needs
// only an open file, so a run of any user who may write the directory
// records its metrics too, instead of a warning on every run for ever.
// The run is the test binary again, as another user when the test runs
// as root (whom no file mode stops).
func TestRecordOthersSidecar(t *testing.T) {
	if name := os.Getenv("ZKLOCK_PROMFILE_RECORD"); name != "" {
		if err := Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(dir, "zklock.prom")
	if err := os.WriteFile(sidecar(name), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	// A copy of the test binary that the other user may run.
	bin := filepath.Join(dir, "promfile.test")
	data, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, "-test.run=^TestRecordOthersSidecar$")
	c.Env = append(os.Environ(), "ZKLOCK_PROMFILE_RECORD="+name)
	if os.Getuid() == 0 {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("the other user's run: %v\n%s", err, out)
	}
	if got, _ := value(t, name, runsTotal, labels{"/a", "success"}); got != 1 {
		t.Errorf("%v runs counted, want 1", got)
	}
}
