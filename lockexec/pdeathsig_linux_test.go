package lockexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestPdeathsig runs a miniature zklock (the test binary in helper mode),
// SIGKILLs it while its command runs, and expects the command to die with
// it. (That the forking thread outlives the child is ensured by startChild's
// design; the Go runtime mostly keeps that thread busy anyway, so no test
// from outside could tell a careless version apart reliably.)
func TestPdeathsig(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = helperEnv("run", []string{"/bin/sh", "-c", `echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"; sleep 100`},
		"D="+dir)
	cmd.Stdin = devNull(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := pids(t, waitMarker(t, dir, "pid"))[0]
	// The orphaned sleep is not covered by Pdeathsig (only the direct
	// child is); don't leave it behind.
	killGroupOnCleanup(t, pid)

	if !zktest.ProcessAlive(pid) {
		t.Fatal("command not running")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	deadline := killed.Add(time.Second)
	for zktest.ProcessAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("command still running 1s after zklock was SIGKILLed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("command gone %v after the helper's death", time.Since(killed).Round(time.Millisecond))
}

// TestWatchdogArmedAtFork: a command that kills its zklock as it starts
// still has its whole tree ended by the watchdog, the grandchild that the
// parent-death signal (which reaches the shell only) does not cover
// included. The watchdog learns the command's group on the forking thread
// as the fork returns. Armed from Run's own goroutine, as it was, it could
// be told milliseconds late: with one P (as zklock runs), that goroutine
// waits for the runtime to take the P back from the thread blocked in
// wait4, and a zklock dead before then left the watchdog a closed pipe and
// no group to kill. The command kills zklock as soon as Supervise reports
// it started, which it does once the fork has returned: by then the
// watchdog must know the group. (A fixed pause instead, which this test
// once had, measured the machine's load as much as the order: with both
// cores busy, the forking thread waited longer than the pause for the P.)
func TestWatchdogArmedAtFork(t *testing.T) {
	eachWatchdog(t, armedAtFork)
}

func armedAtFork(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	extra := []string{"D=" + dir, "GOMAXPROCS=1", envBusy + "=1", envWatchdog + "=" + companion}
	cmd.Env = helperEnv("run", []string{"/bin/sh", "-c",
		`sleep 100 & echo "$$ $!" > "$D/pids"
		while [ ! -e "$D/started" ]; do sleep 0.005; done
		kill -KILL $PPID; wait`}, append(extra, envStarted+"="+filepath.Join(dir, "started"))...)
	cmd.Stdin = devNull(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var tree []int
	zktest.Eventually(t, waitTimeout, "the command's pids", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "pids"))
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		tree = pids(t, string(b))
		return true
	})
	killGroupOnCleanup(t, tree[0])
	_ = cmd.Wait()
	// The watchdog acts when it reads the end of its pipe: wait for the
	// whole tree to go, with a generous ceiling. Left unarmed, the watchdog
	// kills nothing, and the sleep goes on for 100s. Every pid is waited
	// for: one SIGKILL to the group ends its processes one after another,
	// and the sleep can be gone while the shell is still exiting.
	deadline := time.Now().Add(10 * time.Second)
	for anyAlive(tree) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assertGone(t, tree, "the watchdog, after zklock died at the command's start")
}
