package lockexec

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
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
