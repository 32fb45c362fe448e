//go:build unix

package lockexec

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// watchdogScript runs in a small /bin/sh beside the command. It reads the
// command's process group, then one more line, from a pipe whose only
// writer is zklock. zklock writes "ok" when it is done with the command; if
// zklock dies instead (even by SIGKILL, which nothing can catch), the kernel
// closes the pipe, read sees end-of-file, and the watchdog kills the
// command's whole process group. A zklock that dies before any command
// started leaves nothing to kill.
//
// Pdeathsig alone is not enough: it reaches only the direct child, and a
// command is typically a shell whose real work runs in grandchildren, which
// would keep running after zklock's session expired and the next holder
// started.
const watchdogScript = `read -r pgid || exit 0
read -r done; [ "$done" = ok ] || kill -s KILL -- "-$pgid" 2>/dev/null`

// Watchdog kills the command's process group if zklock dies. Start it
// early (its fork and exec can overlap other work), hand it to Run in
// Spec.Watchdog, and Retire it once the lock is released.
type Watchdog struct {
	cmd   *exec.Cmd
	w     *os.File
	armed bool
}

// StartWatchdog starts a watchdog process.
func StartWatchdog() (*Watchdog, error) {
	r, w, err := os.Pipe() // close-on-exec: the command never inherits w
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "zklock-watchdog")
	cmd.Stdin = r
	// Its own session: terminal signals (Ctrl-C, hangup) meant for the
	// command or zklock must not end the watchdog early.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return &Watchdog{cmd: cmd, w: w}, nil
}

// arm tells the watchdog which process group to kill.
func (wd *Watchdog) arm(pgid int) error {
	if wd == nil || wd.armed {
		return nil
	}
	wd.armed = true
	_, err := wd.w.Write([]byte(strconv.Itoa(pgid) + "\n"))
	return err
}

// Retire tells the watchdog zklock is done with the command and reaps it.
// Safe on a nil Watchdog and more than once.
func (wd *Watchdog) Retire() {
	if wd == nil || wd.w == nil {
		return
	}
	if wd.armed {
		_, _ = wd.w.Write([]byte("ok\n"))
	}
	wd.w.Close()
	wd.w = nil
	_ = wd.cmd.Wait()
}
