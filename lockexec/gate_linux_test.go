package lockexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// dieForked is the hook of the helper "run" under envDieDir: on the
// forking thread, right after the fork, it records the child's pid and
// SIGKILLs the helper (a miniature zklock) at the worst moment it can.
// Where the child is already the command (a start without the gate), that
// is once the command has marked "ran", so that its background child
// exists; where the child is something else (the gate, waiting for the
// word to execute the command), it is at once: the command cannot run
// before the word, and waiting for "ran" would wait forever.
func dieForked(dir string, argv []string, pid int) {
	_ = os.WriteFile(filepath.Join(dir, "child"), []byte(fmt.Sprintln(pid)), 0o644)
	command := ""
	if p, err := Resolve(argv); err == nil {
		command, _ = filepath.EvalSymlinks(p)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			break
		}
		exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		if err == nil && exe != command {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// TestArmComesFirst: a zklock SIGKILLed right after the command's fork,
// before it could arm the watchdog with the command's group, leaves
// nothing of the command running: either the command never starts, or
// the watchdog kills its whole tree. Without the gate, the command ran
// before the arm, its background child outlived zklock, and the watchdog,
// told no group, killed nothing.
func TestArmComesFirst(t *testing.T) {
	eachWatchdog(t, func(t *testing.T) {
		dir := t.TempDir()
		script := `sleep 600 & echo $$ $! >"$D/ran.tmp" && mv "$D/ran.tmp" "$D/ran"; wait`
		c := exec.Command(testExecutable(t), "-test.run=^$")
		c.Env = helperEnv("run", []string{"sh", "-c", script}, "D="+dir, envDieDir+"="+dir, envWatchdog+"="+companion)
		c.Stdin, c.Stdout, c.Stderr = nil, os.Stderr, os.Stderr
		err := c.Run()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the miniature zklock ended with %v, want SIGKILL from its hook", err)
		}
		child := pidIn(t, filepath.Join(dir, "child"))
		killGroupOnCleanup(t, child)
		watchdog := pidIn(t, filepath.Join(dir, "watchdog"))
		// The watchdog exits once it has read the end of its pipe and
		// acted on it; the child dies of its Pdeathsig.
		zktest.Eventually(t, waitTimeout, "the watchdog to exit", func() bool { return !zktest.ProcessAlive(watchdog) })
		zktest.Eventually(t, waitTimeout, "the command's group to be empty (was the watchdog armed before the command ran?)", func() bool { return !groupAlive(child) })
		ran, err := os.ReadFile(filepath.Join(dir, "ran"))
		if err != nil {
			return // never ran, and nothing of it can run now
		}
		tree := pids(t, string(ran))
		killGroupOnCleanup(t, tree[0])
		t.Errorf("the command ran before the watchdog was armed (pids %v)", tree)
	})
}

// pidIn reads the pid a helper wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return pids(t, string(b))[0]
}
