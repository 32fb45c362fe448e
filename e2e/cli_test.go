package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// TestMutualExclusion runs 8 zklock processes in loops on one path. The
// command is an overlap detector: mkdir is atomic, so a second holder inside
// the critical section at the same time fails to create the directory. Each
// holder also logs its fencing token, which must grow strictly.
func TestMutualExclusion(t *testing.T) {
	const procs, runs = 8, 10
	path := lockPath(t)
	dir := t.TempDir()
	script := `if ! mkdir "$D/inside" 2>/dev/null; then echo overlap >> "$D/overlaps"; fi
echo "$ZKLOCK_FENCING_TOKEN" >> "$D/tokens"
sleep 0.01
rmdir "$D/inside"`
	loops(t, procs, runs, dir, func(int) []string { return []string{"run", "--path", path} },
		func(int) string { return script })
	if b, err := os.ReadFile(filepath.Join(dir, "overlaps")); err == nil {
		t.Fatalf("%d overlapping holders", bytes.Count(b, []byte("\n")))
	}
	b, err := os.ReadFile(filepath.Join(dir, "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != procs*runs {
		t.Fatalf("%d runs completed, want %d", len(lines), procs*runs)
	}
	prev := int64(-1)
	for _, l := range lines {
		tok, err := strconv.ParseInt(l, 10, 64)
		if err != nil || tok <= prev {
			t.Fatalf("fencing tokens not strictly increasing: %v", lines)
		}
		prev = tok
	}
	assertGone(t, rawZK(t), path)
}

// TestSignalWhileWaiting: a waiting zklock that gets a signal leaves the
// queue and exits 128+N at once.
func TestSignalWhileWaiting(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	startHolder(t, path)
	sigs := lockexec.Forwarded
	dir := t.TempDir()
	var waiters []*exec.Cmd
	for i := range sigs {
		w := zklock(t, "run", "--path", path, "--", "touch", filepath.Join(dir, "ran"))
		var stderr bytes.Buffer
		w.Stderr = &stderr
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		waiters = append(waiters, w)
		zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == i+2 })
	}
	for i, sig := range sigs {
		start := time.Now()
		waiters[i].Process.Signal(sig)
		code := zktest.ExitCodeT(t, waiters[i].Wait())
		if code != 128+int(sig) {
			t.Errorf("%v while waiting: exit %d, want %d; stderr %s", sig, code, 128+int(sig), waiters[i].Stderr)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%v while waiting took %s to exit", sig, d)
		}
		if n := queueLen(conn, path); n != len(sigs)-i {
			t.Errorf("after %v the queue has %d nodes, want %d: the waiter left its node", sig, n, len(sigs)-i)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("an interrupted waiter ran its command")
	}
}

// TestSignalsForwarded: each signal sent to zklock reaches the command
// exactly once, and zklock exits with the command's own code.
func TestSignalsForwarded(t *testing.T) {
	for _, sig := range lockexec.Forwarded {
		t.Run(strings.TrimPrefix(lockexec.SignalName(sig), "SIG"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			name := strings.TrimPrefix(lockexec.SignalName(sig), "SIG")
			script := fmt.Sprintf(`trap 'echo %s >> "$1/got"; exit 7' %s; touch "$1/ready"; while :; do sleep 0.05; done`, name, name)
			c := zklock(t, "run", "--path", lockPath(t), "--", "sh", "-c", script, "sh", dir)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			zktest.Eventually(t, 10*time.Second, "the command to start", func() bool {
				_, err := os.Stat(filepath.Join(dir, "ready"))
				return err == nil
			})
			c.Process.Signal(sig)
			if code := zktest.ExitCodeT(t, c.Wait()); code != 7 {
				t.Errorf("exit %d, want the command's 7", code)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "got"))
			if string(got) != name+"\n" {
				t.Errorf("the command saw %q, want the signal exactly once", got)
			}
		})
	}
}

// TestNothingLeftBehind covers every way a run can end without the lock
// being held any more: the lock path must be reaped each time.
func TestNothingLeftBehind(t *testing.T) {
	conn := rawZK(t)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"success", []string{"--", "true"}, 0},
		{"failing command", []string{"--", "false"}, 1},
		{"not found", []string{"--", "no-such-command-zklock"}, 127},
	}
	for _, tc := range cases {
		path := lockPath(t)
		c := zklock(t, append([]string{"run", "--path", path}, tc.args...)...)
		if code := zktest.ExitCodeT(t, c.Run()); code != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.name, code, tc.code)
		}
		assertGone(t, conn, path)
	}

	// Busy, timeout and SIGINT while waiting, behind one holder.
	path := lockPath(t)
	holder := startHolder(t, path)
	if code := zktest.ExitCodeT(t, zklock(t, "tryrun", "--path", path, "--", "true").Run()); code != 75 {
		t.Errorf("tryrun busy: exit %d", code)
	}
	if code := zktest.ExitCodeT(t, zklock(t, "run", "--timeout", "200ms", "--path", path, "--", "true").Run()); code != 75 {
		t.Errorf("timeout: exit %d", code)
	}
	w := zklock(t, "run", "--path", path, "--", "true")
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })
	w.Process.Signal(syscall.SIGINT)
	if code := zktest.ExitCodeT(t, w.Wait()); code != 130 {
		t.Errorf("SIGINT while waiting: exit %d", code)
	}
	if n := queueLen(conn, path); n != 1 {
		t.Errorf("%d nodes queued after busy, timeout and SIGINT; want only the holder", n)
	}
	holder.Process.Signal(syscall.SIGTERM)
	holder.Wait()
	assertGone(t, conn, path)
}

// TestConnectTimeout: an unreachable ensemble, or one that accepts the
// connection but never answers, fails with 69 within --connect-timeout.
func TestConnectTimeout(t *testing.T) {
	silent := zktest.NewProxyT(t, server(t).Addrs()[0])
	silent.Blackhole()
	for _, servers := range []string{"127.0.0.1:1", silent.Addr()} {
		start := time.Now()
		c := zklock(t, "--servers", servers, "--connect-timeout", "1s", "run", "--path", "/cli/unreachable", "--", "true")
		out, err := c.CombinedOutput()
		if code := zktest.ExitCodeT(t, err); code != 69 {
			t.Errorf("%s: exit %d, want 69: %s", servers, code, out)
		}
		// The bound allows for process start-up and the session close of
		// a race-detector build on a loaded machine, and stays below the
		// 5s default, so it still shows the flag is what ended the wait.
		if d := time.Since(start); d >= zkconn.DefaultConnectTimeout-time.Second {
			t.Errorf("%s: took %s with --connect-timeout 1s", servers, d)
		}
		if !bytes.HasPrefix(out, []byte("zklock: zookeeper unavailable")) || bytes.Count(out, []byte("\n")) != 1 {
			t.Errorf("%s: output %q", servers, out)
		}
	}
}

// TestIgnoredSignalsStayIgnored: started with SIGHUP and SIGINT ignored, as
// nohup and a script's `&` start it, zklock leaves them ignored, for itself
// and for its command, as a shell does: a hangup neither ends the run nor
// reaches the command. Other signals are still forwarded.
func TestIgnoredSignalsStayIgnored(t *testing.T) {
	dir := t.TempDir()
	script := `grep '^SigIgn:' /proc/$$/status > "$1/sigign"
trap 'echo USR1 >> "$1/got"' USR1
touch "$1/ready"
while [ ! -e "$1/stop" ]; do sleep 0.05; done`
	c := zklock(t, "run", "--path", lockPath(t), "--", "sh", "-c", script, "sh", dir)
	c.Args = append([]string{"sh", "-c", `trap "" HUP INT; exec "$0" "$@"`, c.Path}, c.Args[1:]...)
	c.Path = "/bin/sh"
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ready"))
		return err == nil
	})
	// Ignored signals are discarded when sent; USR1, sent after them, is
	// forwarded, so once the command has seen it, the others had their
	// chance to do harm.
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGUSR1} {
		if err := c.Process.Signal(sig); err != nil {
			t.Fatalf("%v: %v", sig, err)
		}
	}
	zktest.Eventually(t, 10*time.Second, "the command to see SIGUSR1", func() bool {
		got, _ := os.ReadFile(filepath.Join(dir, "got"))
		return string(got) == "USR1\n"
	})
	if err := os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := zktest.ExitCodeT(t, c.Wait()); code != 0 {
		t.Errorf("exit %d, want 0: an ignored signal ended the run", code)
	}
	line, _ := os.ReadFile(filepath.Join(dir, "sigign"))
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(string(line), "SigIgn:")), 16, 64)
	if hupInt := uint64(1<<(syscall.SIGHUP-1) | 1<<(syscall.SIGINT-1)); err != nil || mask&hupInt != hupInt {
		t.Errorf("the command's %q (%v): want SIGHUP and SIGINT ignored", line, err)
	}
}
