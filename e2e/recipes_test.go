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

	"github.com/zklock/zklock/internal/testkit/zktest"
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

// numbers reads a file of numbers, one per line.
func numbers(t *testing.T, p string) []int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q is not a number", p, f)
		}
		out = append(out, n)
	}
	return out
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
	const readerScript = `mkdir "$D/r.$$"
[ -e "$D/writer" ] && echo "reader with writer" >> "$D/bad"
sleep 0.3; rmdir "$D/r.$$"`
	const writerScript = `mkdir "$D/writer" 2>/dev/null || echo "two writers" >> "$D/bad"
ls -d "$D"/r.* >/dev/null 2>&1 && echo "writer with readers" >> "$D/bad"
sleep 0.03; rmdir "$D/writer"`

	// A writer holds the lock while four readers queue behind it. Each
	// reader marks its entry with a file that stays (nobody removes it in
	// this phase), waits until all four marks are there (10s at most), and
	// records how many it saw when it stopped waiting. A reader leaves only
	// after that, so if every reader saw 4, none had left when the fourth
	// entered: all four were inside at once. A count of the readers inside
	// would race with the first to leave; a count of marks that only grow
	// cannot. If they were let in one by one, the first gives up waiting
	// with fewer than 4, and its record shows it.
	const releasedScript = `touch "$D/entered/$$"
[ -e "$D/writer" ] && echo "reader with writer" >> "$D/bad"
i=0; while [ "$(ls "$D/entered" | wc -l)" -lt 4 ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
ls "$D/entered" | wc -l >> "$D/released"`
	if err := os.Mkdir(filepath.Join(dir, "entered"), 0o755); err != nil {
		t.Fatal(err)
	}
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
	if seen := numbers(t, filepath.Join(dir, "released")); len(seen) != 4 || slices.Min(seen) != 4 {
		t.Errorf("the released readers saw %v of the 4 inside when they left, want each to see all 4", seen)
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
	// Each count is taken inside, of marks made and removed inside: it can
	// miss a holder that is leaving, never count one too many. So it bounds
	// the holders from below, which proves the limit; that three do run
	// together was shown above, where none could leave.
	if m := slices.Max(numbers(t, filepath.Join(dir, "running"))); m > 3 {
		t.Errorf("%d holders ran at once with --limit 3", m)
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
