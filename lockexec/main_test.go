//go:build unix

package lockexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// The test binary doubles as two helper programs, chosen by envHelper:
//
//	run:   a miniature zklock: lockexec.Supervise on the command in envArgv, with
//	       INT/TERM/HUP/QUIT forwarded; every signal it receives is logged
//	       to envSigLog, so a test can prove the terminal did not deliver
//	       Ctrl-C to it.
//	count: a command for the terminal test: logs each SIGINT to $D/int and
//	       exits 0 once $D/stop exists. A shell loop would do, except that
//	       dash forks its sleeps with vfork, and a Ctrl-Z landing between
//	       vfork and exec leaves the shell stuck in the kernel rather than
//	       stopped, which would make the test flaky for reasons that are
//	       not zklock's.
//	shell: a miniature job-control shell for the terminal test: it starts
//	       "run" in its own foreground process group, and when that stops
//	       it takes the terminal back, logs it, waits for the test's go
//	       ahead (envFgFile) and does what `fg` does.
const (
	envHelper   = "LOCKEXEC_TEST_HELPER"
	envArgv     = "LOCKEXEC_TEST_ARGV"     // JSON []string
	envSigLog   = "LOCKEXEC_TEST_SIGLOG"   // run: file to append received signals to
	envShellLog = "LOCKEXEC_TEST_SHELLLOG" // shell: event log
	envFgFile   = "LOCKEXEC_TEST_FGFILE"   // shell: created by the test to request fg
	envBusy     = "LOCKEXEC_TEST_BUSY"     // run: keep a goroutine busy on the CPU
	envWatchdog = "LOCKEXEC_TEST_WATCHDOG" // run: the watchdog program to start
	envStarted  = "LOCKEXEC_TEST_STARTED"  // run: file to create once Supervise says the command started
	envDieDir   = "LOCKEXEC_TEST_DIE_DIR"  // run: die by SIGKILL right after the fork (see dieForked)
)

// busyWork is what the busy goroutine of envBusy does.
var busyWork int

func TestMain(m *testing.M) {
	if IsWatchdog() {
		os.Exit(WatchdogMain())
	}
	switch os.Getenv(envHelper) {
	case "run":
		os.Exit(helperRun())
	case "shell":
		os.Exit(helperShell())
	case "count":
		os.Exit(helperCount())
	}
	zktest.UnignoreSignals()
	code := m.Run()
	if companionDir != "" {
		os.RemoveAll(companionDir)
	}
	os.Exit(code)
}

// helperEnv returns the environment for a helper process of the given mode.
func helperEnv(mode string, argv []string, extra ...string) []string {
	b, err := json.Marshal(argv)
	if err != nil {
		panic(err)
	}
	env := append(os.Environ(), envHelper+"="+mode, envArgv+"="+string(b))
	// Under -race, every helper would otherwise sleep 1s on exit.
	env = append(env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return append(env, extra...)
}

func appendLine(path, line string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

func helperRun() int {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv(envArgv)), &argv); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	received := make(chan os.Signal, 8)
	signal.Notify(received, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	forward := make(chan os.Signal, 8)
	go func() {
		for sig := range received {
			appendLine(os.Getenv(envSigLog), SignalName(sig.(syscall.Signal)))
			forward <- sig
		}
	}()
	warn := func(s string) { fmt.Fprintln(os.Stderr, "zklock:", s) }
	if os.Getenv(envBusy) != "" {
		// Another goroutine wants the P all the time, as zklock's own
		// do at moments (decoding a reply, collecting garbage).
		go func() {
			for {
				busyWork++
			}
		}()
	}
	companion = os.Getenv(envWatchdog)
	wd, err := StartWatchdog()
	if err != nil {
		warn(err.Error())
	}
	if dir := os.Getenv(envDieDir); dir != "" && wd != nil {
		_ = os.WriteFile(filepath.Join(dir, "watchdog"), []byte(fmt.Sprintln(wd.pid)), 0o644)
		testHookForked = func(pid int) { dieForked(dir, argv, pid) }
	}
	defer wd.Retire()
	err = Supervise(context.Background(), Spec{
		Argv:     argv,
		Signals:  forward,
		Watchdog: wd,
		Warn:     warn,
		Started: func(int) {
			if p := os.Getenv(envStarted); p != "" {
				_ = os.WriteFile(p, nil, 0o644)
			}
		},
	})
	var exitErr *ExitError
	var startErr *StartError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		return exitErr.Code
	case errors.As(err, &startErr):
		return startErr.Code
	}
	fmt.Fprintln(os.Stderr, "zklock:", err)
	return 1
}

func helperShell() int {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv(envArgv)), &argv); err != nil {
		return 2
	}
	logPath := os.Getenv(envShellLog)
	tty := terminal{fd: 0, pgrp: unix.Getpgrp()}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envHelper+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, envHelper+"=run")
	pid, err := syscall.ForkExec(os.Args[0], []string{os.Args[0], "-test.run=^$"}, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		// Like a shell starting a job: own group, in the foreground.
		Sys: &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0},
	})
	if err != nil {
		appendLine(logPath, "start failed: "+err.Error())
		return 2
	}
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil {
			if err == syscall.EINTR {
				continue
			}
			appendLine(logPath, "wait failed: "+err.Error())
			return 2
		}
		if ws.Stopped() {
			_ = tty.setForeground(tty.pgrp)
			appendLine(logPath, "stopped "+SignalName(ws.StopSignal()))
			for {
				if _, err := os.Stat(os.Getenv(envFgFile)); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			_ = tty.setForeground(pid)
			_ = unix.Kill(-pid, syscall.SIGCONT)
			appendLine(logPath, "continued")
			continue
		}
		appendLine(logPath, fmt.Sprintf("exit %d fg=%d", ws.ExitStatus(), tty.foreground()))
		_ = tty.setForeground(tty.pgrp)
		return 0
	}
}

func helperCount() int {
	dir := os.Getenv("D")
	ints := make(chan os.Signal, 4)
	signal.Notify(ints, syscall.SIGINT)
	tmp := filepath.Join(dir, "ready.tmp")
	if err := os.WriteFile(tmp, []byte(fmt.Sprintln(os.Getpid())), 0o644); err != nil {
		return 2
	}
	if err := os.Rename(tmp, filepath.Join(dir, "ready")); err != nil {
		return 2
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ints:
			appendLine(filepath.Join(dir, "int"), "INT")
		case <-tick.C:
			if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
				return 0
			}
		}
	}
}
