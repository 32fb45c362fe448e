package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// childrenOf lists the pids whose parent is pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	names, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, n := range names {
		child, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", n.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// starve stops a holding zklock and its watchdog with SIGSTOP, as a
// starved host stops them in effect, until the test continues them (or
// ends). The watchdog is the child of zklock that leads a session of its
// own.
func starve(t *testing.T, zklockPid int) {
	t.Helper()
	stopped := []int{zklockPid}
	for _, pid := range childrenOf(t, zklockPid) {
		if sid, err := unix.Getsid(pid); err == nil && sid == pid {
			stopped = append(stopped, pid)
		}
	}
	if len(stopped) == 1 {
		t.Fatalf("no watchdog among zklock's children")
	}
	for _, pid := range stopped {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	}
}

// TestStarvedHolderOverlaps reproduces the overlap of a starved host
// without chance: a holder whose zklock and watchdog get no CPU from
// before the deadline until past its session's expiry (here SIGSTOP)
// kills nothing in time, and the next holder starts beside its command.
// Both detectors see it: the next holder's flock guard exits 99, and the
// holder's command is alive after that start. What zklock can still do is
// to say so: once it runs again, it exits 76 with a possible overlap and
// a lateness at least the time from the expiry to its continue. No
// priority bounds this; the fencing token is what must hold beyond it.
func TestStarvedHolderOverlaps(t *testing.T) {
	dir, path := t.TempDir(), lockPath(t)
	conn := rawZK(t)
	c := zklock(t, append([]string{"run", "--session-timeout", "2s", "--path", path, "--"},
		guarded(dir, `echo $$ > "$D/pid"; touch "$D/started"; while :; do sleep 0.05; done`)...)...)
	c.Env = append(c.Env, "D="+dir)
	stderr, command := startToStarve(t, c, dir)
	starve(t, c.Process.Pid)
	zktest.Eventually(t, 30*time.Second, "the session to expire", func() bool { return queueLen(conn, path) == 0 })
	expired := time.Now()

	next := zklock(t, append([]string{"run", "--path", path, "--"}, guarded(dir, "true")...)...)
	if code := zktest.ExitCodeT(t, next.Run()); code != overlapExit {
		t.Fatalf("the next holder exited %d, want %d: its flock guard must find the starved holder's tree", code, overlapExit)
	}
	if !zktest.ProcessAlive(command) {
		t.Fatal("the starved holder's command died before the next holder started")
	}

	continued := time.Now()
	if err := c.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	floor := continued.Sub(expired)
	if code := zktest.ExitCodeT(t, c.Wait()); code != 76 {
		t.Fatalf("exit %d, want 76: %s", code, stderr.String())
	}
	out := stderr.String()
	if !strings.Contains(out, "zklock: warning: possible overlap on "+path) {
		t.Errorf("the starved holder did not report the overlap:\n%s", out)
	}
	t.Logf("the expiry came %s before zklock ran again:\n%s", floor.Round(time.Millisecond), out)
}

// TestLateKillReported: a holder whose zklock and watchdog are both
// stopped (SIGSTOP, as a starved host stops them in effect) past the
// expiry of its session finds, once continued, that its command ran on
// after the server could have given the lock away. It must report a
// possible overlap, with the lateness measured, and never a clean loss:
// the warning line in text, the possible_overlap event and outcome under
// JSON, and exit 76 in both. The lateness it reports is at least the time
// from the test seeing the node gone (the session expired) to the
// continue.
func TestLateKillReported(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			dir, path := t.TempDir(), lockPath(t)
			conn := rawZK(t)
			c := zklock(t, "run", "--log-format", format, "--session-timeout", "2s", "--path", path,
				"--", "sh", "-c", `echo $$ > "$1/pid"; touch "$1/started"; while :; do sleep 0.05; done`, "sh", dir)
			stderr, command := startToStarve(t, c, dir)
			starve(t, c.Process.Pid)
			zktest.Eventually(t, 30*time.Second, "the session to expire", func() bool { return queueLen(conn, path) == 0 })
			expired := time.Now()
			if !zktest.ProcessAlive(command) {
				t.Fatal("the command died while zklock and its watchdog were stopped")
			}
			// Resume zklock only: its watchdog stays stopped, so the kill
			// is zklock's, after its own look.
			continued := time.Now()
			if err := c.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			floor := continued.Sub(expired)
			if code := zktest.ExitCodeT(t, c.Wait()); code != 76 {
				t.Fatalf("exit %d, want 76: %s", code, stderr.String())
			}
			if zktest.ProcessAlive(command) {
				t.Errorf("the command %d outlived zklock", command)
			}
			out := stderr.String()
			if format == "text" {
				if !strings.Contains(out, "zklock: warning: possible overlap on "+path) || !strings.Contains(out, "ZKLOCK_FENCING_TOKEN") ||
					!strings.Contains(out, "zklock: possible overlap: the command still ran") {
					t.Errorf("stderr does not report a possible overlap:\n%s", out)
				}
				t.Logf("stderr:\n%s", out)
				return
			}
			objs := jsonLines(t, out)
			ev := firstEvent(t, objs, "possible_overlap")
			late := time.Duration(ev["late_ms"].(float64)) * time.Millisecond
			if ev["level"] != "warning" || ev["session_timeout_ms"] != 2000.0 || late < floor.Truncate(time.Millisecond) {
				t.Errorf("possible_overlap %v: want late_ms at least %s (the session seen expired to the continue)", ev, floor)
			}
			if exit := objs[len(objs)-1]; exit["outcome"] != "possible_overlap" || exit["exit_code"] != 76.0 {
				t.Errorf("exit %v, want outcome possible_overlap", exit)
			}
			t.Logf("late by %s (at least %s seen by the test)", late, floor.Round(time.Millisecond))
		})
	}
}

// startToStarve starts c, a holder whose command writes its pid to dir/pid
// and then touches dir/started, and returns its stderr and the command's
// pid once the command runs; the holder is killed when the test ends.
func startToStarve(t *testing.T, c *exec.Cmd, dir string) (*syncBuffer, int) {
	t.Helper()
	return startUntilStarted(t, c, dir), readPid(t, filepath.Join(dir, "pid"))
}
