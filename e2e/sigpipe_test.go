package e2e

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestStderrPipeClosed: a holder whose stderr reader has gone writes its
// warning and its last line into a closed pipe. It survives them: it stops
// the command at --max-runtime, exits 124 and releases the lock at once,
// rather than dying of SIGPIPE (141) and leaving its node until the session
// expires.
func TestStderrPipeClosed(t *testing.T) {
	path := lockPath(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	z := zklock(t, "run", "--max-runtime", "1s", "--path", path, "--", "sleep", "5")
	z.Stderr = w
	err = z.Run()
	w.Close()
	if code := zktest.ExitCodeT(t, err); code != 124 {
		t.Fatalf("exit %d, want 124", code)
	}
	if n := queueLen(rawZK(t), path); n != 0 {
		t.Errorf("%d nodes left under %s after exit", n, path)
	}
}

// TestStderrClosed: with fd 2 closed (`2>&-`) the same run exits 124 and
// leaves nothing behind.
func TestStderrClosed(t *testing.T) {
	path := lockPath(t)
	bin, err := exec.LookPath("zklock")
	if err != nil {
		t.Fatal(err)
	}
	z := zklock(t)
	z.Args = []string{"sh", "-c", `exec "$0" run --max-runtime 1s --path "$1" -- sleep 5 2>&-`, bin, path}
	z.Path = "/bin/sh"
	if code := zktest.ExitCodeT(t, z.Run()); code != 124 {
		t.Fatalf("exit %d, want 124", code)
	}
	if n := queueLen(rawZK(t), path); n != 0 {
		t.Errorf("%d nodes left under %s after exit", n, path)
	}
}

// TestCommandSIGPIPEDefault: zklock catches SIGPIPE for its own writes, but
// the command must start with SIGPIPE at its default, or the pipelines in
// it would run on after their reader is gone. SigIgn in /proc is the mask
// of ignored signals; the command is grep itself, so it reads its own.
func TestCommandSIGPIPEDefault(t *testing.T) {
	out, err := zklock(t, "run", "--path", lockPath(t), "--", "grep", "^SigIgn:", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(string(out), "SigIgn:")), 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if mask&(1<<(syscall.SIGPIPE-1)) != 0 {
		t.Errorf("the command starts with SIGPIPE ignored (SigIgn %016x)", mask)
	}
	// And a pipeline in the command ends when its reader does.
	if out, err := zklock(t, "run", "--path", lockPath(t), "--", "sh", "-c", "yes | head -1").CombinedOutput(); err != nil || string(out) != "y\n" {
		t.Errorf("yes | head -1: %q, %v", out, err)
	}
}
