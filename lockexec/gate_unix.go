//go:build unix

package lockexec

import (
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/zklock/zklock/internal/deadman"
)

// gate is a start of the command through the watchdog's gate
// (internal/deadman/gate.go): the forked child executes the watchdog's
// program, which waits for open before it executes the command. The
// watchdog is armed with the child's group in between, so that no
// instruction of the command runs before the watchdog knows whom to kill.
//
// The alternative, putting the command in a process group known before the
// fork (the watchdog's), would have the watchdog in the group it kills and
// in the terminal's foreground group, and every group signal, stop and
// "group still alive" check would have to step around it. The gate costs
// one exec of a small program per command, and changes nothing else.
type gate struct {
	program string
	goR     *os.File // the child's GateGo
	goW     *os.File // zklock's: the path, then its end
	errR    *os.File // zklock's: the errno of a failed exec, or end-of-file
	errW    *os.File // the child's GateErr
}

// openGate prepares a gated start with the watchdog's program; nil when
// there is no watchdog to arm, or no pipe to be had (the command then
// starts directly, as it would without a watchdog).
func (wd *Watchdog) openGate() *gate {
	if wd == nil || wd.program == "" {
		return nil
	}
	goR, goW, err := os.Pipe() // close-on-exec: only the child gets a copy
	if err != nil {
		return nil
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		goR.Close()
		goW.Close()
		return nil
	}
	return &gate{program: wd.program, goR: goR, goW: goW, errR: errR, errW: errW}
}

// attr is the child's attributes: the command's, with the gate's two
// descriptors and its marker.
func (g *gate) attr(a *syscall.ProcAttr) *syscall.ProcAttr {
	// a.Files is the command's 0, 1 and 2: the gate's come next, at
	// deadman.GateGo and deadman.GateErr.
	files := append(a.Files[:len(a.Files):len(a.Files)], g.goR.Fd(), g.errW.Fd())
	env := append(a.Env[:len(a.Env):len(a.Env)], deadman.GateMarker)
	return &syscall.ProcAttr{Dir: a.Dir, Env: env, Files: files, Sys: a.Sys}
}

// argv is the gate's: zklock's argv[0], the name that the watchdog's
// program answers to, then the command's.
func (g *gate) argv(command []string) []string {
	return append([]string{os.Args[0]}, command...)
}

// forked drops zklock's copies of the child's ends, on the forking thread
// right after the fork.
func (g *gate) forked() {
	g.goR.Close()
	g.errW.Close()
}

// open tells the gate to execute path. Called once the watchdog is armed.
func (g *gate) open(path string) {
	_, _ = g.goW.Write([]byte(path))
	g.goW.Close()
}

// result waits for the gate's exec: nil once the command runs, the errno
// if it could not be executed.
func (g *gate) result() error {
	defer g.errR.Close()
	b, err := io.ReadAll(g.errR)
	if err != nil || len(b) == 0 {
		return nil
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return errors.New("the command could not be executed")
	}
	return syscall.Errno(n)
}

// close releases everything, when the child could not be forked.
func (g *gate) close() {
	for _, f := range []*os.File{g.goR, g.goW, g.errR, g.errW} {
		f.Close()
	}
}

// testHookForked, if set, runs on the forking thread as soon as the fork
// has returned, before the watchdog is armed: tests kill zklock there.
var testHookForked func(pid int)
