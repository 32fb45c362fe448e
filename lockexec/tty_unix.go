//go:build unix

package lockexec

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal is zklock's view of its controlling terminal, reached through
// the command's stdin.
type terminal struct {
	// fd is stdin's descriptor in zklock, or -1 when stdin is not zklock's
	// controlling terminal (then there is no job control to take part in).
	fd int
	// pgrp is zklock's own process group.
	pgrp int
}

func probeTerminal(stdin *os.File) terminal {
	t := terminal{fd: -1, pgrp: unix.Getpgrp()}
	fd := int(stdin.Fd())
	// TIOCGPGRP fails with ENOTTY for a non-terminal and for a terminal
	// that is not ours, which is exactly the test we need.
	if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
		t.fd = fd
	}
	return t
}

func (t terminal) jobControl() bool { return t.fd >= 0 }

// foreground returns the terminal's foreground process group, -1 if unknown.
func (t terminal) foreground() int {
	if t.fd < 0 {
		return -1
	}
	pg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	if err != nil {
		return -1
	}
	return pg
}

// setForeground makes pgrp the terminal's foreground group. zklock may be
// in the background when it calls this (taking the terminal back from the
// command), which would raise SIGTTOU and stop it, hence withoutSIGTTOU.
func (t terminal) setForeground(pgrp int) error {
	if t.fd < 0 {
		return nil
	}
	var err error
	withoutSIGTTOU(func() {
		err = unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, pgrp)
	})
	return err
}

// pgrpOrphaned reports whether zklock's process group is orphaned: no
// member has a parent in another group of the same session, i.e. no
// job-control shell is waiting to continue it. The kernel discards
// SIGTSTP/SIGTTIN/SIGTTOU sent to such a group, so zklock must not expect
// to be stopped and continued. When unsure it answers true, which costs a
// Ctrl-Z that does nothing rather than a command stopped for good.
func pgrpOrphaned(pgrp int) bool {
	sid, err := unix.Getsid(0)
	if err != nil {
		return true
	}
	// The common case: zklock was started directly by the shell.
	if ppid := os.Getppid(); ppid > 0 {
		ppg, err1 := unix.Getpgid(ppid)
		psid, err2 := unix.Getsid(ppid)
		if err1 == nil && err2 == nil && ppg != pgrp && psid == sid {
			return false
		}
	}
	// zklock run from a script that is itself the job: look at the others.
	return !memberHasOutsideParent(pgrp, sid)
}
