package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// recordAt reads a lock path's success record: its server mtime, or zero.
func recordAt(t *testing.T, conn *zk.Conn, path string) time.Time {
	t.Helper()
	_, st, err := conn.Get(path + "/" + success.NodeName)
	if err == zk.ErrNoNode {
		return time.Time{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(st.Mtime)
}

// TestOncePerAcrossHosts: two processes (as two hosts would) run one job
// with --once-per. A failing run records nothing, so the next one runs; a
// success closes the window: the next run exits 75 (or -E) without running
// and, with -v, says when and where the job last succeeded. list and holders
// show the record. Two runs racing for the open window run the job once.
func TestOncePerAcrossHosts(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	job := func(name, then string) []string {
		return []string{"--once-per", "1h", "--path", path, "--", "sh", "-c", `echo ` + name + ` >> "$1"; ` + then, "sh", runs}
	}
	run := func(args ...string) result {
		t.Helper()
		return runWithin(t, 20*time.Second, zklock(t, args...))
	}

	if r := run(append([]string{"tryrun"}, job("a-fails", "exit 3")...)...); r.code != 3 {
		t.Fatalf("failing run: exit %d, want 3; stderr: %s", r.code, r.stderr)
	}
	if !recordAt(t, conn, path).IsZero() {
		t.Fatal("a failing run recorded a success")
	}
	if r := run(append([]string{"-v", "run"}, job("b", "exit 0")...)...); r.code != 0 || !strings.Contains(r.stderr, "no success recorded yet") {
		t.Fatalf("run after the failure: exit %d, want 0; stderr: %s", r.code, r.stderr)
	}
	at := recordAt(t, conn, path)
	if at.IsZero() {
		t.Fatal("no success recorded")
	}
	host, _ := os.Hostname()
	r := run(append([]string{"-v", "tryrun"}, job("c", "exit 0")...)...)
	if r.code != 75 || !strings.Contains(r.stderr, "not running: "+path+" last succeeded") || !strings.Contains(r.stderr, "on "+host) {
		t.Errorf("run within the window: exit %d, want 75 and when and where; stderr: %s", r.code, r.stderr)
	}
	t.Logf("skipped run, -v: %s", r.stderr)
	if r := run(append([]string{"run", "-E", "0"}, job("d", "exit 0")...)...); r.code != 0 || r.stderr != "" {
		t.Errorf("-E 0 within the window: exit %d, stderr %q; want 0 and silence", r.code, r.stderr)
	}
	if got := lines(runs); got != 2 {
		t.Errorf("the job ran %d times, want 2 (the failure and the first success)", got)
	}
	if !recordAt(t, conn, path).Equal(at) {
		t.Error("a skipped run rewrote the record")
	}

	// Both views show the record: who, and how long ago.
	for _, args := range [][]string{{"list", "--path", path}, {"holders", "--path", path}} {
		r := run(args...)
		if r.code != 0 || !strings.Contains(r.stdout, "last success at "+path+": ") || !strings.Contains(r.stdout, " ago) on "+host+" pid ") {
			t.Errorf("%v: exit %d, stdout %q; want the last success", args, r.code, r.stdout)
		}
		t.Logf("%v:\n%s", args, r.stdout)
	}
	r = run("list", "--path", path, "--json")
	var listed struct {
		Locks []struct {
			Path        string `json:"path"`
			LastSuccess struct {
				At   time.Time `json:"at"`
				Host string    `json:"host"`
			} `json:"last_success"`
		} `json:"locks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed.Locks) != 1 ||
		!listed.Locks[0].LastSuccess.At.Equal(at) || listed.Locks[0].LastSuccess.Host != host {
		t.Errorf("list --json: %v, %s; want the record at %s on %s", err, r.stdout, at, host)
	}

	// Two hosts racing for an open window: one runs, the other skips, and
	// they never overlap (the kernel lock inside the command).
	if err := conn.Delete(path+"/"+success.NodeName, -1); err != nil {
		t.Fatal(err)
	}
	race := filepath.Join(dir, "race")
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errs := make([]error, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := zklockCmd(append([]string{"run", "--once-per", "1h", "--path", path, "--"},
				guarded(dir, `echo x >> "$1"; sleep 0.3`)...)...)
			if err != nil {
				errs[i] = err
				return
			}
			c.Args = append(c.Args, "sh", race)
			out, err := c.CombinedOutput()
			if c.ProcessState == nil {
				errs[i] = fmt.Errorf("zklock did not start: %v", err)
				return
			}
			codes[i] = c.ProcessState.ExitCode()
			if codes[i] != 0 && codes[i] != 75 {
				errs[i] = fmt.Errorf("exit %d: %s", codes[i], out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := lines(race); got != 1 || codes[0]+codes[1] != 75 {
		t.Errorf("racing runs: the job ran %d times, exits %v; want once, 0 and 75", got, codes)
	}

	// Nothing else is left: the record alone keeps the lock path, and
	// once it is deleted the path is reaped.
	if ch := children(t, conn, path); len(ch) != 1 || ch[0] != success.NodeName {
		t.Errorf("the lock path holds %v, want the record alone", ch)
	}
	if err := conn.Delete(path+"/"+success.NodeName, -1); err != nil {
		t.Fatal(err)
	}
	assertGone(t, conn, path)
}

// TestOncePerWindowExpires: once the window has passed on the server's
// clock, the job runs again, and the new record is at least the window
// after the old one.
func TestOncePerWindowExpires(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	// The window must outlast a run or two, or every run after the first
	// comes too late to be skipped: a loaded machine stretches a run, and
	// the window stretches with it.
	began := time.Now()
	if r := runWithin(t, 20*time.Second, zklock(t, "tryrun", "--path", path+"-timing", "--", "true")); r.code != 0 {
		t.Fatalf("a timing run: exit %d; stderr: %s", r.code, r.stderr)
	}
	window := max(1500*time.Millisecond, 4*time.Since(began)).Round(100 * time.Millisecond)
	args := []string{"tryrun", "--once-per", window.String(), "--path", path, "--", "sh", "-c", `echo x >> "$1"`, "sh", runs}
	if r := runWithin(t, 20*time.Second, zklock(t, args...)); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	first := recordAt(t, conn, path)
	skipped := 0
	zktest.Eventually(t, 20*time.Second+2*window, "the window to expire and the job to run again", func() bool {
		r := runWithin(t, 20*time.Second, zklock(t, args...))
		if r.code == 75 {
			skipped++
		}
		return r.code == 0
	})
	second := recordAt(t, conn, path)
	if got := second.Sub(first); got < window {
		t.Errorf("the job ran again %s after its success, within the window of %s", got, window)
	}
	if skipped == 0 || lines(runs) != 2 {
		t.Errorf("%d runs skipped and %d run; want at least one skipped within the window and 2 run", skipped, lines(runs))
	}
	if err := conn.Delete(path+"/"+success.NodeName, -1); err != nil {
		t.Fatal(err)
	}
	assertGone(t, conn, path)
}

// TestOncePerInsideAncestor: --once-per needs a lock this zklock takes;
// on a path its ancestor holds it exits 64 and changes nothing.
func TestOncePerInsideAncestor(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	c := zklock(t, "run", "--path", path, "--", "sh", "-c", `zklock run --once-per 1h --path "$P" -- true`)
	c.Env = append(c.Env, "P="+path)
	r := runWithin(t, 20*time.Second, c)
	if r.code != 64 || !strings.Contains(r.stderr, "give --once-per to the outer zklock") {
		t.Errorf("exit %d, want 64 with a hint; stderr: %s", r.code, r.stderr)
	}
	assertGone(t, conn, path)
}
