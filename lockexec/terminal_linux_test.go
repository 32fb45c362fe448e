package lockexec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/ptytest"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

const (
	ctrlC = 0x03
	ctrlZ = 0x1a
)

// TestTerminalCtrlCAndCtrlZ plays a user at a terminal: a miniature
// job-control shell (session leader of a fresh pty) starts a miniature
// zklock in the foreground, which runs a command counting SIGINTs. It
// checks that Ctrl-C reaches the command exactly once and zklock not at
// all, that Ctrl-Z stops the command and hands the terminal back to the
// shell, that `fg` resumes it with the terminal, and that zklock takes the
// foreground back when the command exits.
func TestTerminalCtrlCAndCtrlZ(t *testing.T) {
	term, slave := ptytest.Open(t)
	dir := t.TempDir()
	sigLog := filepath.Join(dir, "zklock-signals")
	shellLog := filepath.Join(dir, "shell")
	fgFile := filepath.Join(dir, "fg")
	// The command is the test binary in "count" mode; envHelper is
	// overridden for it by the environment zklock passes on.
	command := []string{"/usr/bin/env", envHelper + "=count", os.Args[0], "-test.run=^$"}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = helperEnv("shell", command,
		"D="+dir, envSigLog+"="+sigLog, envShellLog+"="+shellLog, envFgFile+"="+fgFile)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	exited := make(chan struct{})
	var shellErr error
	go func() { shellErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})

	t0 := time.Now()
	child := pids(t, waitMarker(t, dir, "ready"))[0]
	t.Logf("%v ready", time.Since(t0))
	killGroupOnCleanup(t, child)
	info, ok := readProcStat(child)
	if !ok {
		t.Fatal("command vanished")
	}
	zklock, shell := info.ppid, cmd.Process.Pid
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("states: command %c, zklock %c, shell %c; foreground %d (command %d, zklock %d, shell %d)",
				procState(child), procState(zklock), procState(shell), term.Foreground(t), child, zklock, shell)
		}
	})
	shellEvents := func() []string { return lines(shellLog) }
	intCount := func() int { return len(lines(filepath.Join(dir, "int"))) }

	if fg := term.Foreground(t); fg != child {
		t.Fatalf("foreground group %d, want the command's %d (zklock %d)", fg, child, zklock)
	}

	t.Logf("%v Ctrl-C", time.Since(t0))
	term.Type(t, ctrlC)
	zktest.Eventually(t, waitTimeout, "command's SIGINT trap", func() bool { return intCount() == 1 })

	t.Logf("%v Ctrl-Z", time.Since(t0))
	term.Type(t, ctrlZ)
	zktest.Eventually(t, waitTimeout, "shell to see the job stop", func() bool { return len(shellEvents()) >= 1 })
	if ev := shellEvents()[0]; ev != "stopped SIGTSTP" {
		t.Fatalf("shell saw %q, want the job stopped by SIGTSTP", ev)
	}
	if st := procState(child); st != 'T' {
		t.Fatalf("command state %q, want stopped", st)
	}
	if fg := term.Foreground(t); fg != shell {
		t.Fatalf("foreground group %d while suspended, want the shell's %d", fg, shell)
	}

	t.Logf("%v fg", time.Since(t0))
	touch(t, fgFile)
	zktest.Eventually(t, waitTimeout, "command resumed in the foreground", func() bool {
		return term.Foreground(t) == child && procState(child) != 'T'
	})

	t.Logf("%v Ctrl-C", time.Since(t0))
	term.Type(t, ctrlC)
	zktest.Eventually(t, waitTimeout, "second SIGINT trap", func() bool { return intCount() == 2 })

	touch(t, filepath.Join(dir, "stop"))
	t.Logf("%v stop", time.Since(t0))
	select {
	case <-exited:
		if shellErr != nil {
			t.Fatalf("shell: %v", shellErr)
		}
	case <-time.After(waitTimeout):
		t.Fatal("shell did not exit")
	}
	t.Logf("%v exited", time.Since(t0))
	want := []string{"stopped SIGTSTP", "continued", fmt.Sprintf("exit 0 fg=%d", zklock)}
	if got := shellEvents(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shell events %q, want %q (zklock gives the foreground back to itself)", got, want)
	}
	if n := intCount(); n != 2 {
		t.Errorf("command saw %d SIGINTs for 2 Ctrl-C", n)
	}
	if b, err := os.ReadFile(sigLog); err == nil {
		t.Errorf("zklock received signals it would forward: %q", b)
	}
}
