package deadman

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The gate is the first program that zklock's forked child executes, in
// place of the command: it waits until zklock has armed the watchdog with
// the child's process group, and only then executes the command.
//
// Without it, the watchdog learns the group only after the fork has
// returned in zklock, and by then the command has already been executed
// (Go forks with vfork semantics: the fork returns once the exec has
// succeeded). A zklock SIGKILLed in between leaves a command whose
// children nothing guards: Pdeathsig reaches the direct child only, and
// the watchdog, told no group, kills none. With the gate, the arm comes
// first: zklock arms, then tells the gate which file to execute. Were
// zklock to die before that, the gate reads end-of-file and exits without
// executing anything.
//
// The gate is the watchdog's program started in another mode, so that
// every platform and every install (companion or zklock's own executable)
// has it. Its descriptors:
//
//	0, 1, 2    the command's
//	GateGo     zklock writes the path of the command's file here, then
//	           closes it; end-of-file with nothing read: zklock is gone
//	GateErr    close-on-exec; if the exec fails the gate writes the errno
//	           in decimal here, so that zklock classifies the failure as
//	           it would its own exec's
//
// Its argv is zklock's argv[0] followed by the command's argv (a binary
// that dispatches on its name, a test binary standing in for zklock,
// must dispatch to the gate too), and its environment the command's with
// GateMarker appended. The gate drops both additions before the exec:
// the command sees what it would have seen.
const (
	GateGo  = 3
	GateErr = 4
)

// GateMarker is in the environment of a process started as the gate,
// appended last to the command's. It is found by its whole entry, not
// looked up by name (the command's own environment may hold anything),
// and anywhere: an emulator such as qemu-user may hand the environment
// over in another order.
const GateMarker = "ZKLOCK_INTERNAL_WATCHDOG=gate1"

// isGate reports whether this process was started as the gate.
func isGate() bool {
	for _, kv := range os.Environ() {
		if kv == GateMarker {
			return true
		}
	}
	return false
}

// commandEnviron is the gate's environment without its marker: the
// command's.
func commandEnviron() []string {
	env := os.Environ()
	out := env[:0]
	for _, kv := range env {
		if kv != GateMarker {
			out = append(out, kv)
		}
	}
	return out
}

// gate waits for zklock's word and executes the command. It returns only
// when there is nothing to execute: zklock is gone (0; the group has
// nothing else in it) or the exec failed (127, after reporting why).
func gate() int {
	// zklock writes a path of at most PATH_MAX bytes and closes the pipe.
	var buf [4097]byte
	n := 0
	for n < len(buf) {
		r, err := unix.Read(GateGo, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || r == 0 {
			break
		}
		n += r
	}
	_ = unix.Close(GateGo)
	if n == 0 || n == len(buf) {
		return 0
	}
	unix.CloseOnExec(GateErr)
	errno := syscall.EINVAL // no command, which zklock never asks for
	if len(os.Args) > 1 {
		err := syscall.Exec(string(buf[:n]), os.Args[1:], commandEnviron())
		if e, ok := err.(syscall.Errno); ok {
			errno = e
		}
	}
	_, _ = unix.Write(GateErr, []byte(strconv.Itoa(int(errno))))
	return 127
}
