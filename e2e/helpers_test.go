package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// Helpers that the end-to-end tests share: zklock as a command against the
// package's shared server, the lock paths, the queue on the server, and
// the overlap detector.

// lockPath gives the test a lock path of its own on the shared server,
// which it starts if need be (and under -short, skips the test).
func lockPath(t testing.TB) string {
	t.Helper()
	server(t)
	return zktest.TestPath(t, cliRoot)
}

// zklock returns a command running the zklock under test against the
// shared server. Call it on the test's own goroutine; elsewhere use
// zklockCmd, which returns the error instead of failing the test.
func zklock(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	server(t) // under -short, skip before anything runs
	c, err := zklockCmd(args...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// zklockCmd is zklock for goroutines that are not the test's own.
func zklockCmd(args ...string) (*exec.Cmd, error) {
	bin, err := exec.LookPath("zklock")
	if err != nil {
		return nil, err
	}
	srv, err := lazy.Get()
	if err != nil {
		return nil, err
	}
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "ZKLOCK_SERVERS="+srv.ConnectString(), "NO_COLOR=1")
	return c, nil
}

func rawZK(t testing.TB) *zk.Conn { return zktest.DialT(t, server(t).Addrs()) }

func queueLen(conn *zk.Conn, path string) int {
	ch, _, err := conn.Children(path)
	if err != nil {
		return 0
	}
	return len(ch)
}

// assertGone proves nothing was left in ZooKeeper: the lock path's
// container is reaped once it is empty.
func assertGone(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	zktest.Eventually(t, 10*time.Second, path+" to be reaped", func() bool {
		ok, _, err := conn.Exists(path)
		return err == nil && !ok
	})
}

// startHolder runs a zklock that holds path until it is sent SIGTERM.
func startHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	return startHolderArgs(t, []string{"run", "--path", path})
}

// startHolderArgs runs zklock with args and a command that holds the lock
// until zklock is sent SIGTERM or SIGINT.
func startHolderArgs(t *testing.T, args []string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	h := zklock(t, append(args, "--", "sh", "-c", `touch "$1/held"; while :; do sleep 0.05; done`, "sh", dir)...)
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Process.Signal(syscall.SIGTERM)
		h.Wait()
	})
	zktest.Eventually(t, 10*time.Second, "the holder to hold", func() bool {
		_, err := os.Stat(filepath.Join(dir, "held"))
		return err == nil
	})
	return h
}

// Overlap detection that survives SIGKILL: every command runs under
// `flock -n` on a local file. The kernel drops that lock only when the last
// process holding the descriptor (the command and every child it started)
// has died, so a second holder that starts while any part of the first
// one's process tree lives fails with exit 99.
const overlapExit = 99

// treeScript is a holder's command: a process tree (a background subshell
// and the foreground loop) that writes a timestamp every 10ms until killed.
const treeScript = `(while :; do date +%s%N >> "$D/holder"; sleep 0.01; done) & echo $! > "$D/grandchild"
touch "$D/started"
while :; do date +%s%N >> "$D/holder"; sleep 0.01; done`

func guarded(dir, script string) []string {
	return []string{"flock", "-n", "-E", strconv.Itoa(overlapExit), filepath.Join(dir, "detector"), "sh", "-c", script}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// waitLine waits until the file p holds a whole line, and returns it
// without its newline. A shell's `echo X > p` creates p before it writes
// X, so a file's existence does not mean its line is there.
func waitLine(t *testing.T, p string, within time.Duration, what string) string {
	t.Helper()
	var b []byte
	zktest.Eventually(t, within, what, func() bool {
		b, _ = os.ReadFile(p)
		return bytes.HasSuffix(b, []byte("\n"))
	})
	return strings.TrimSpace(string(b))
}

// lines counts the lines of a file, 0 if it does not exist.
func lines(p string) int {
	b, _ := os.ReadFile(p)
	return strings.Count(string(b), "\n")
}

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// result is how a zklock run ended.
type result struct {
	stdout, stderr string
	code           int
}

// runWithin runs c to its end, killing it after within so that a zklock
// that waits for itself fails the test instead of hanging it.
func runWithin(t *testing.T, within time.Duration, c *exec.Cmd) result {
	t.Helper()
	r, err := runBounded(c, within)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runResult is runWithin for a goroutine that is not the test's own: a
// run that fails to start, still runs after within (then killed) or
// cannot be waited for ends with code -1 and the reason in stderr.
func runResult(c *exec.Cmd, within time.Duration) result {
	r, err := runBounded(c, within)
	if err != nil {
		return result{code: -1, stderr: err.Error()}
	}
	return r
}

// runBounded runs c to its end and kills it after within. The error says
// why there is no exit to report: c did not start, still ran after within
// (with what it wrote on stderr), or could not be waited for.
func runBounded(c *exec.Cmd, within time.Duration) (result, error) {
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		return result{}, err
	}
	timer := time.AfterFunc(within, func() { c.Process.Kill() })
	err := c.Wait()
	if !timer.Stop() {
		return result{}, fmt.Errorf("%v still running after %s; stderr: %s", c.Args, within, errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		return result{}, err
	}
	return r, nil
}

// startUntilStarted starts a zklock whose command touches DIR/started,
// and waits for that file; its stderr is returned, and it is killed when
// the test ends.
func startUntilStarted(t *testing.T, c *exec.Cmd, dir string) *syncBuffer {
	t.Helper()
	stderr := &syncBuffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the command to start", func() bool { return fileExists(filepath.Join(dir, "started")) })
	return stderr
}
