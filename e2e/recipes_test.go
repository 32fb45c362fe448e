package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
)

// loops runs n goroutines that each run zklock `runs` times with args and
// the given shell script (with $D set to dir), and fails on any error.
func loops(t *testing.T, n, runs int, dir string, args func(i int) []string, script func(i int) string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n*runs)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < runs; r++ {
				c, err := zklockCmd(append(args(i), "--", "sh", "-c", script(i))...)
				if err != nil {
					errs <- err
					return
				}
				c.Env = append(c.Env, "D="+dir)
				if out, err := c.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%v: %v: %s", args(i), err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// maxOf is the largest number in a file of numbers, one per line.
func maxOf(t *testing.T, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m := 0
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		m = max(m, n)
	}
	return m
}

func noFile(t *testing.T, p, what string) {
	t.Helper()
	if b, err := os.ReadFile(p); err == nil {
		t.Fatalf("%s: %s", what, b)
	}
}

// TestReadersAndWriters: shared holders run together (4 readers queued
// behind a writer are all seen inside at once when it leaves), and in a
// mixed stream of readers and writers, writers always run alone.
func TestReadersAndWriters(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	const readerScript = `mkdir "$D/r.$$"; ls -d "$D"/r.* | wc -l >> "$D/readers"
[ -e "$D/writer" ] && echo "reader with writer" >> "$D/bad"
sleep 0.3; rmdir "$D/r.$$"`
	const writerScript = `mkdir "$D/writer" 2>/dev/null || echo "two writers" >> "$D/bad"
ls -d "$D"/r.* >/dev/null 2>&1 && echo "writer with readers" >> "$D/bad"
sleep 0.03; rmdir "$D/writer"`

	// A writer holds the lock while four readers queue behind it. Each of
	// them stays inside until all four are (10s at most), so that how late
	// one of them is scheduled after the writer leaves cannot decide how
	// many are seen together; if they were let in one by one, each gives
	// up waiting and the count shows it.
	const releasedScript = `mkdir "$D/r.$$"; ls -d "$D"/r.* | wc -l >> "$D/readers"
[ -e "$D/writer" ] && echo "reader with writer" >> "$D/bad"
i=0; while [ "$(ls -d "$D"/r.* | wc -l)" -lt 4 ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
rmdir "$D/r.$$"`
	gate := startHolderArgs(t, []string{"run", "--path", path})
	var readers []*exec.Cmd
	for i := 0; i < 4; i++ {
		c := zklock(t, "run", "--shared", "--path", path, "--", "sh", "-c", releasedScript)
		c.Env = append(c.Env, "D="+dir)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		readers = append(readers, c)
	}
	conn := rawZK(t)
	zktest.Eventually(t, 10*time.Second, "the readers to queue", func() bool { return queueLen(conn, path) == 5 })
	gate.Process.Signal(syscall.SIGTERM)
	gate.Wait()
	for _, c := range readers {
		if code := zktest.ExitCodeT(t, c.Wait()); code != 0 {
			t.Errorf("reader exit %d", code)
		}
	}
	if m := maxOf(t, filepath.Join(dir, "readers")); m != 4 {
		t.Errorf("at most %d of the 4 released readers ran at once, want all 4", m)
	}

	// A mixed stream: exclusion must hold throughout.
	loops(t, 8, 3, dir,
		func(i int) []string {
			if i%4 == 3 {
				return []string{"run", "--path", path}
			}
			return []string{"run", "--shared", "--path", path}
		},
		func(i int) string {
			if i%4 == 3 {
				return writerScript
			}
			return readerScript
		})
	noFile(t, filepath.Join(dir, "bad"), "exclusion broken")
	assertGone(t, conn, path)
}

// TestSemaphoreLimit: with --limit 3, three holders run together and a
// fourth waits; in a stream of six loops, never more than three run.
func TestSemaphoreLimit(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	const holdScript = `mkdir "$D/h.$$"; ls -d "$D"/h.* | wc -l >> "$D/running"
while [ ! -e "$D/go" ]; do sleep 0.02; done; rmdir "$D/h.$$"`
	var holders []*exec.Cmd
	for i := 0; i < 4; i++ {
		c := zklock(t, "run", "--limit", "3", "--path", path, "--", "sh", "-c", holdScript)
		c.Env = append(c.Env, "D="+dir)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		holders = append(holders, c)
	}
	conn := rawZK(t)
	running := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "h.*"))
		return len(m)
	}
	zktest.Eventually(t, 10*time.Second, "three holders and a waiter", func() bool {
		return running() == 3 && queueLen(conn, path+"/leases") == 4 && queueLen(conn, path+"/locks") == 1
	})
	// A different limit is refused while the holders agree on 3.
	c := zklock(t, "tryrun", "--limit", "2", "--path", path, "--", "true")
	out, err := c.CombinedOutput()
	if code := zktest.ExitCodeT(t, err); code != 64 || !strings.Contains(string(out), "--limit 3") {
		t.Errorf("mismatched limit: exit %d: %s", code, out)
	}
	if n := running(); n != 3 {
		t.Fatalf("%d holders inside with --limit 3", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h := range holders {
		if code := zktest.ExitCodeT(t, h.Wait()); code != 0 {
			t.Errorf("holder exit %d", code)
		}
	}

	loops(t, 6, 3, dir,
		func(int) []string { return []string{"run", "--limit", "3", "--path", path} },
		func(int) string {
			return `mkdir "$D/h.$$"; ls -d "$D"/h.* | wc -l >> "$D/running"; sleep 0.1; rmdir "$D/h.$$"`
		})
	if m := maxOf(t, filepath.Join(dir, "running")); m != 3 {
		t.Errorf("at most %d holders ran at once, want exactly 3", m)
	}
	assertGone(t, conn, path)
}

// TestMultiPathNoDeadlock: jobs naming the same two paths in opposite
// orders all finish, and never run together.
func TestMultiPathNoDeadlock(t *testing.T) {
	a, b := lockPath(t), lockPath(t)
	// The command sees the paths in canonical (sorted) order, whatever
	// order the job named them in.
	sorted := strings.Join(slices.Sorted(slices.Values([]string{a, b})), " ")
	dir := t.TempDir()
	loops(t, 6, 4, dir,
		func(i int) []string {
			if i%2 == 0 {
				return []string{"run", "--timeout", "30s", "--path", a, "--path", b}
			}
			return []string{"run", "--timeout", "30s", "--path", b, "--path", a}
		},
		func(int) string {
			return `mkdir "$D/in" 2>/dev/null || echo overlap >> "$D/bad"
[ "$ZKLOCK_PATHS" = "` + sorted + `" ] || echo "paths: $ZKLOCK_PATHS" >> "$D/bad"
set -- $ZKLOCK_FENCING_TOKENS; [ $# -eq 2 ] || echo "tokens: $ZKLOCK_FENCING_TOKENS" >> "$D/bad"
sleep 0.02; rmdir "$D/in"`
		})
	noFile(t, filepath.Join(dir, "bad"), "multi-path")
	conn := rawZK(t)
	assertGone(t, conn, a)
	assertGone(t, conn, b)
}
