package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestCancelInProgress: the holder's command ignores SIGTERM and forks a
// grandchild that ignores it too; an older run waits. A run with
// --cancel-in-progress revokes the holder, which gets its kill grace and
// exits 76 (outcome revoked), supersedes the waiter (exit 75), and runs
// once the holder's whole process tree is gone: every command runs inside
// one overlap detector, which the grandchild keeps locked while it lives.
//
// The newest command starts within the grace plus one handoff of the
// revocation. The handoff is measured here first, on the same queue: the
// time from one holder's end to the next one's command.
func TestCancelInProgress(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	const grace = time.Second

	first, firstErr := startGated(t, dir, "first", "run", "--supersede", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the first holder's command", func() bool { return fileExists(filepath.Join(dir, "first.started")) })
	holder := zklock(t, append([]string{"run", "--supersede", "--log-format", "json", "--kill-grace", grace.String(), "--path", path, "--"},
		guarded(dir, `date +%s%N > "$D/at"; trap '' TERM; `+treeScript)...)...)
	holder.Env = append(holder.Env, "D="+dir)
	holderErr := &syncBuffer{}
	holder.Stderr = holderErr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the holder to queue", func() bool { return queueLen(conn, path) == 2 })
	released := time.Now()
	touch(t, filepath.Join(dir, "first"))
	wantExit(t, first, firstErr, 0, "the first holder")
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	handoff := readNanos(t, filepath.Join(dir, "at")).Sub(released)

	waiter, waiterErr := startGated(t, dir, "w", "run", "--supersede", "--log-format", "json", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })

	newest := zklock(t, append([]string{"run", "--cancel-in-progress", "--log-format", "json", "--path", path, "--"},
		guarded(dir, `date +%s%N > "$D/newest"`)...)...)
	newest.Env = append(newest.Env, "D="+dir)
	newestErr := &syncBuffer{}
	newest.Stderr = newestErr
	if err := newest.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { newest.Process.Kill() })

	wantExit(t, waiter, waiterErr, 75, "the older waiter")
	if !strings.Contains(waiterErr.String(), fmt.Sprintf("pid %d", newest.Process.Pid)) {
		t.Errorf("the waiter does not name the newest run: %s", waiterErr)
	}
	if exit := firstEvent(t, jsonLines(t, waiterErr.String()), "exit"); exit["outcome"] != "superseded" {
		t.Errorf("waiter: exit event %v, want outcome superseded", exit)
	}
	wantExit(t, holder, holderErr, 76, "the holder")
	holderEvents := jsonLines(t, holderErr.String())
	if exit := firstEvent(t, holderEvents, "exit"); exit["outcome"] != "revoked" {
		t.Errorf("holder: exit event %v, want outcome revoked", exit)
	}
	by, _ := firstEvent(t, holderEvents, "revoked")["by"].(map[string]any)
	if by["pid"] != float64(newest.Process.Pid) {
		t.Errorf("the holder was not revoked by the newest run (pid %d): %v", newest.Process.Pid, by)
	}
	// When the server wrote the request (the node's mtime).
	asked, err := time.Parse(time.RFC3339Nano, fmt.Sprint(by["at"]))
	if err != nil {
		t.Fatalf("the revoked event's time: %v", err)
	}
	wantExit(t, newest, newestErr, 0, "the newest run")
	if exit := firstEvent(t, jsonLines(t, newestErr.String()), "exit"); exit["outcome"] != "success" {
		t.Errorf("newest: exit event %v", exit)
	}
	if fileExists(filepath.Join(dir, "w.started")) {
		t.Error("the superseded waiter ran its command")
	}
	gc, _ := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "grandchild"))))
	if gc == 0 || fileExists(fmt.Sprintf("/proc/%d", gc)) && !zombie(gc) {
		t.Errorf("the holder's grandchild %d is still alive", gc)
	}
	// The newest started after the grace (the holder ignored SIGTERM, so
	// its tree lived that long), and within the holder's grace plus one
	// handoff: the holder's reaction to the request (one notification,
	// as in a handoff) and the handoff after its SIGKILL (reap, release,
	// notify, start) are each bounded by the handoff measured above, with
	// room for a loaded machine. The request is dated by the server's
	// clock, on this machine, to the ms; the holder's lines by its own.
	term, kill := warningAt(t, holderEvents, "sending SIGTERM"), warningAt(t, holderEvents, "sending SIGKILL")
	started := readNanos(t, filepath.Join(dir, "newest"))
	took, reaction, after := started.Sub(asked), term.Sub(asked), started.Sub(kill)
	room := 5 * max(handoff, 200*time.Millisecond)
	t.Logf("measured handoff %s; the newest started %s after the request: the holder reacted in %s, gave a grace of %s, and the newest started %s after its SIGKILL (room %s each)",
		handoff.Round(time.Millisecond), took.Round(time.Millisecond), reaction.Round(time.Millisecond),
		kill.Sub(term).Round(time.Millisecond), after.Round(time.Millisecond), room)
	if took < grace-time.Millisecond {
		t.Errorf("the newest started %s after the request, before the holder's grace of %s was over", took, grace)
	}
	if reaction > room || after > room {
		t.Errorf("the newest started %s after the request, beyond the holder's grace plus a handoff", took)
	}
	assertGone(t, conn, path)
}

// TestCancelInProgressMixedRefused: a cancelling run on a plain FIFO
// queue is refused (64) as a superseding one is, and the holder runs on.
func TestCancelInProgressMixedRefused(t *testing.T) {
	conn := rawZK(t)
	assertRefusedBeside(t, conn, nil, []string{"--cancel-in-progress"}, "superseding queue", "the other queue's contender", "drop --supersede")
}

// warningAt is the time of the first warning event whose text has part.
func warningAt(t *testing.T, objs []map[string]any, part string) time.Time {
	t.Helper()
	for _, o := range objs {
		if msg, _ := o["msg"].(string); o["event"] == "warning" && strings.Contains(msg, part) {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(o["ts"]))
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
	}
	t.Fatalf("no warning %q in %v", part, objs)
	return time.Time{}
}

// readNanos reads a time written by date +%s%N.
func readNanos(t *testing.T, p string) time.Time {
	t.Helper()
	ns, err := strconv.ParseInt(strings.TrimSpace(readFile(t, p)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return time.Unix(0, ns)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// zombie reports whether pid has died and not been reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
