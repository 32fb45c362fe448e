//go:build unix

package lockexec

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// watchdogScript runs in a small /bin/sh beside the command. It reads one
// line from a pipe whose only writer is zklock. zklock writes "ok" when it
// is done with the command; if zklock dies instead (even by SIGKILL, which
// nothing can catch), the kernel closes the pipe, read sees end-of-file, and
// the watchdog kills the command's whole process group.
//
// Pdeathsig alone is not enough: it reaches only the direct child, and a
// command is typically a shell whose real work runs in grandchildren, which
// would keep running after zklock's session expired and the next holder
// started.
const watchdogScript = `read -r done; [ "$done" = ok ] || kill -s KILL -- "-$1" 2>/dev/null`

// watchdog is the running watchdog process and zklock's end of its pipe.
type watchdog struct {
	cmd *exec.Cmd
	w   *os.File
}

// startWatchdog starts a watchdog for process group pgid. It returns nil
// (after a warning) if it cannot: Pdeathsig still covers the direct child.
func startWatchdog(pgid int, warn func(string)) *watchdog {
	r, w, err := os.Pipe() // close-on-exec: the command never inherits w
	if err != nil {
		warn("cannot start the watchdog: " + err.Error())
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "zklock-watchdog", strconv.Itoa(pgid))
	cmd.Stdin = r
	// Its own session: terminal signals (Ctrl-C, hangup) meant for the
	// command or zklock must not end the watchdog early.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		warn("cannot start the watchdog: " + err.Error())
		return nil
	}
	return &watchdog{cmd: cmd, w: w}
}

// release tells the watchdog that zklock is done with the command (which
// has exited, or been stopped as a group), and reaps it.
func (wd *watchdog) release() {
	if wd == nil {
		return
	}
	_, _ = wd.w.Write([]byte("ok\n"))
	wd.w.Close()
	_ = wd.cmd.Wait()
}
