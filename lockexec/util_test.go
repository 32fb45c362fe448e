//go:build unix

package lockexec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// waitTimeout bounds every wait for something a child process does. It is
// generous because CI machines stall; the waits themselves poll and return
// as soon as the condition holds.
const waitTimeout = 10 * time.Second

// shPrelude is prepended to every test script: mark writes a marker file
// atomically (write then rename) so the test never reads half a line, and
// core dumps from SIGQUIT tests stay off.
const shPrelude = `ulimit -c 0 2>/dev/null
mark() { printf '%s\n' "$2" > "$D/$1.tmp" && mv "$D/$1.tmp" "$D/$1"; }
`

// shSpec returns a Spec running script under /bin/sh with $D set to a
// fresh directory for marker files, and stdin on /dev/null so the tests
// behave the same whether or not `go test` runs on a terminal.
func shSpec(t *testing.T, script string) (Spec, string) {
	t.Helper()
	dir := t.TempDir()
	// The shell reports children killed by signals ("Terminated"): keep
	// that out of the test output, but on disk for a failing test.
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stderr.Close()
		if t.Failed() {
			if b, _ := os.ReadFile(stderr.Name()); len(b) > 0 {
				t.Logf("command stderr:\n%s", b)
			}
		}
	})
	return Spec{
		Argv:          []string{"/bin/sh", "-c", shPrelude + script},
		Env:           append(os.Environ(), "D="+dir),
		Stdin:         devNull(t),
		Stderr:        stderr,
		KillGrace:     DefaultKillGrace,
		LostKillGrace: DefaultKillGrace,
	}, dir
}

func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

type runResult struct {
	err     error
	elapsed time.Duration
}

// runAsync runs Supervise in a goroutine; the result channel is buffered so the
// goroutine never outlives a failed test for long.
func runAsync(ctx context.Context, s Spec) <-chan runResult {
	ch := make(chan runResult, 1)
	go func() {
		start := time.Now()
		err := Supervise(ctx, s)
		ch <- runResult{err, time.Since(start)}
	}()
	return ch
}

func await(t *testing.T, ch <-chan runResult) runResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return")
		return runResult{}
	}
}

// waitMarker waits for a marker file written by mark and returns its
// content without the trailing newline.
func waitMarker(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	var b []byte
	zktest.Eventually(t, waitTimeout, "marker "+name, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil
	})
	return strings.TrimSuffix(string(b), "\n")
}

// pids parses a marker holding space-separated process ids.
func pids(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad pid %q in %q", f, s)
		}
		out = append(out, n)
	}
	return out
}

// lines returns the complete lines of a file a script appends to; a line
// still being written (no newline yet) is not counted.
func lines(path string) []string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	} else {
		return nil
	}
	return strings.Split(s, "\n")
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// warnings collects what Supervise passes to Spec.Warn.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, s)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func (w *warnings) has(sub string) bool {
	for _, m := range w.list() {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}

// killGroupOnCleanup makes sure a test's process group is gone even when
// the test fails half-way.
func killGroupOnCleanup(t *testing.T, pgid int) {
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
}

// anyAlive reports whether a pid of tree is still alive.
func anyAlive(tree []int) bool {
	for _, pid := range tree {
		if zktest.ProcessAlive(pid) {
			return true
		}
	}
	return false
}

// assertGone fails the test for each process of tree still alive after
// what should have ended them all.
func assertGone(t *testing.T, tree []int, what string) {
	t.Helper()
	for _, pid := range tree {
		if zktest.ProcessAlive(pid) {
			t.Errorf("pid %d survived %s", pid, what)
		}
	}
}
