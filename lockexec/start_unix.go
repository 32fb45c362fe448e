//go:build unix

package lockexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Resolve finds the file argv[0] names, as execvp would, and classifies a
// failure the way a shell does for exit codes: not found anywhere (or no
// command at all) is 127, but a file of that name that is not executable is
// 126 (exec.LookPath alone reports both as "not found"). The error is a
// *StartError. Callers resolve before they queue for a lock, so that a typo
// fails at once rather than after the wait, and pass the result in
// Spec.Path.
func Resolve(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", errEmptyCommand
	}
	path, serr := lookPath(argv[0])
	if serr != nil {
		return "", serr
	}
	return path, nil
}

func lookPath(argv0 string) (string, *StartError) {
	if argv0 == "" {
		return "", &StartError{Name: argv0, Code: 127, Err: exec.ErrNotFound}
	}
	if strings.Contains(argv0, "/") {
		// A path is checked now as well, so that ./script.sh with a typo,
		// or without its execute bit, fails before zklock connects. What
		// only execve can tell (a missing #! interpreter, a file that is
		// no program) is classified when it fails there.
		return argv0, checkFile(argv0)
	}
	path, err := lookPathEnv(argv0)
	if errors.Is(err, exec.ErrDot) {
		// PATH names a relative directory and the user put it there:
		// run what a shell would run rather than refuse.
		err = nil
	}
	if err == nil {
		return path, nil
	}
	for _, dir := range filepath.SplitList(searchPath()) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, argv0)
		if fi, serr := os.Stat(p); serr == nil && !fi.IsDir() {
			return "", &StartError{Name: argv0, Code: 126, Err: syscall.EACCES}
		}
	}
	return "", &StartError{Name: argv0, Code: 127, Err: exec.ErrNotFound}
}

// checkFile is execve's verdict on a path, where it can be had without
// running it: missing (127), a directory or not executable (126).
func checkFile(p string) *StartError {
	fi, err := os.Stat(p)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && errno != syscall.ENOENT && errno != syscall.ENOTDIR {
			return &StartError{Name: p, Code: 126, Err: errno} // EACCES on a directory, ELOOP, ...
		}
		return &StartError{Name: p, Code: 127, Err: syscall.ENOENT}
	}
	if fi.IsDir() {
		return &StartError{Name: p, Code: 126, Err: syscall.EISDIR}
	}
	if unix.Access(p, unix.X_OK) != nil {
		return &StartError{Name: p, Code: 126, Err: syscall.EACCES}
	}
	return nil
}

// execError classifies an error from starting the child.
func execError(argv0, path string, err error) *StartError {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &StartError{Name: argv0, Code: 126, Err: err}
	}
	switch errno {
	case syscall.ENOENT:
		if _, serr := os.Stat(path); serr == nil {
			// The file is there, so it is its #! interpreter that is
			// missing: the command was found but cannot run.
			return &StartError{Name: argv0, Code: 126, Err: errBadInterpreter}
		}
		return &StartError{Name: argv0, Code: 127, Err: errno}
	case syscall.ENOTDIR:
		return &StartError{Name: argv0, Code: 127, Err: errno}
	}
	// EACCES (no permission, a directory), ENOEXEC, ETXTBSY, E2BIG, ...
	return &StartError{Name: argv0, Code: 126, Err: errno}
}

var errBadInterpreter = errors.New("bad interpreter: no such file or directory")

var errEmptyCommand = &StartError{Code: 127, Err: errors.New("empty command")}

// waitEvent is one state change of the child reported by wait4.
type waitEvent struct {
	status syscall.WaitStatus
	err    error // wait4 failed; the child's fate is unknown
}

// child is a started command. events delivers every stop and then exactly
// one final event (exit or error), after which the waiter goroutine ends;
// done is closed when it has.
type child struct {
	pid    int
	events <-chan waitEvent
	done   <-chan struct{}
}

// startChild forks and execs the command from a goroutine locked to its OS
// thread, then waits for it on that same thread. Pdeathsig is tied to the
// thread that forked, so that thread must live (and not be handed to
// another goroutine that might end it) until the child has been reaped.
//
// started, if set, is called with the child's pid on that goroutine as
// soon as the fork has succeeded, before anything else: before the
// goroutine that called startChild can run again. With one P (zklock runs
// Go code on one thread) that goroutine may wait for the scheduler's
// monitor to take the P back from the thread blocked in wait4, which takes
// up to 10 ms on an idle process; what must not wait (arming the watchdog)
// goes in started.
func startChild(path string, argv []string, attr *syscall.ProcAttr, started func(pid int)) (*child, error) {
	type result struct {
		pid int
		err error
	}
	startc := make(chan result)
	events := make(chan waitEvent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		// Unlock only once the child is reaped (or never started); until
		// then the thread must stay ours.
		defer runtime.UnlockOSThread()
		pid, err := syscall.ForkExec(path, argv, attr)
		if err == nil && started != nil {
			started(pid)
		}
		startc <- result{pid, err}
		if err != nil {
			return
		}
		for {
			var ws syscall.WaitStatus
			_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				events <- waitEvent{err: err}
				return
			}
			events <- waitEvent{status: ws}
			if !ws.Stopped() {
				return
			}
		}
	}()
	s := <-startc
	if s.err != nil {
		<-done
		return nil, s.err
	}
	return &child{pid: s.pid, events: events, done: done}, nil
}
