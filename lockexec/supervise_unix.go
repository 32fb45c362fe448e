//go:build unix

package lockexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supervise starts the command described by s and supervises it until it exits.
// It returns nil when the command exits 0, an *ExitError when it fails on
// its own, a *StartError when it cannot be started, and a *TerminatedError
// (wrapping ErrLockLost, ErrLockRevoked, ErrMaxRuntime or ctx.Err(), and the command's
// *ExitError if any) when Supervise had to stop it. Supervise never returns before the
// command itself has exited, and every goroutine it starts has ended.
func Supervise(ctx context.Context, s Spec) error {
	if len(s.Argv) == 0 {
		return errEmptyCommand
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("command not started: %w", err)
	}
	if s.Lost != nil && s.OnLost == Terminate {
		// Starting a command only to SIGTERM it at once would let it run,
		// however briefly, without the lock.
		select {
		case cause := <-s.Lost:
			if cause != nil {
				return fmt.Errorf("%w: %w; command not started", ErrLockLost, cause)
			}
			return fmt.Errorf("%w; command not started", ErrLockLost)
		default:
		}
	}
	if s.OnRevoke == Terminate {
		select {
		case cause := <-s.Revoked:
			return fmt.Errorf("%w: %w; command not started", ErrLockRevoked, cause)
		default:
		}
	}
	path := s.Path
	if path == "" {
		var err error
		if path, err = Resolve(s.Argv); err != nil {
			return err
		}
	}

	stdin, stdout, stderr := orFile(s.Stdin, os.Stdin), orFile(s.Stdout, os.Stdout), orFile(s.Stderr, os.Stderr)
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	env = childEnviron(env)
	tty := probeTerminal(stdin)
	sys := &syscall.SysProcAttr{Setpgid: true}
	if tty.jobControl() && tty.foreground() == tty.pgrp {
		sys.Foreground = true
		sys.Ctty = tty.fd // a descriptor in zklock, as Foreground requires
	}
	setPdeathsig(sys)
	attr := &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{stdin.Fd(), stdout.Fd(), stderr.Fd()},
		Sys:   sys,
	}

	var contC chan os.Signal
	if tty.jobControl() {
		// SIGCONT tells us the shell continued the job after we stopped
		// along with the command (see onStop). Notify does not stop the
		// signal from continuing the process.
		contC = make(chan os.Signal, 1)
		signal.Notify(contC, syscall.SIGCONT)
		defer signal.Stop(contC)
	}

	c, armErr, err := startArmed(s.Watchdog, path, s.Argv, attr)
	runtime.KeepAlive(stdin)
	runtime.KeepAlive(stdout)
	runtime.KeepAlive(stderr)
	if err != nil {
		return execError(s.Argv[0], path, err)
	}
	sv := &supervisor{spec: &s, child: c, pgid: c.pid, tty: tty, grace: s.KillGrace, wd: s.Watchdog}
	defer sv.stopTimers()
	if armErr != nil {
		sv.warn((&WatchdogError{Op: "arm", Err: armErr}).Error())
	}
	if s.Started != nil {
		withoutSIGTTOU(func() { s.Started(c.pid) })
	}
	return sv.loop(ctx, contC)
}

// startArmed starts the command with the watchdog armed with its group
// before the command runs: through the gate (gate_unix.go) when there is a
// watchdog. The watchdog is armed on the forking thread, as soon as the
// fork returns, and only then is the gate told to execute the command. A
// zklock that dies or stops at any moment leaves no instruction of the
// command running that the watchdog does not know of. If the gate itself
// cannot be executed (its file replaced since the watchdog started), the
// command starts directly and is armed as soon as the fork returns, as
// without a gate. err is the command's exec error.
func startArmed(wd *Watchdog, path string, argv []string, attr *syscall.ProcAttr) (c *child, armErr error, err error) {
	if g := wd.openGate(); g != nil {
		c, err = startChild(g.program, g.argv(argv), g.attr(attr), func(pid int) {
			g.forked()
			if testHookForked != nil {
				testHookForked(pid)
			}
			armErr = wd.arm(pid)
			g.open(path)
		})
		if err != nil {
			g.close()
		} else if err = g.result(); err == nil {
			return c, armErr, nil
		} else {
			// The gate has reported the errno and exits: reap it.
			for ev := range c.events {
				if ev.err != nil || !ev.status.Stopped() {
					break
				}
			}
			<-c.done
			return nil, armErr, err
		}
	}
	c, err = startChild(path, argv, attr, func(pid int) {
		if testHookForked != nil {
			testHookForked(pid)
		}
		armErr = wd.arm(pid)
	})
	return c, armErr, err
}

func orFile(f, def *os.File) *os.File {
	if f != nil {
		return f
	}
	return def
}

// supervisor holds the state of one running command for Supervise's select loop.
// Only the loop's goroutine touches it.
type supervisor struct {
	spec  *Spec
	child *child
	pgid  int // the command's process group; the child leads it
	tty   terminal
	grace time.Duration
	wd    *Watchdog // nil-safe; tells whether it stopped the command

	// term is set once Supervise decides to stop the command, and the first
	// reason wins: later lock loss or max-runtime change nothing.
	term       *TerminatedError
	graceTimer *time.Timer // running between SIGTERM and SIGKILL
	// pollTicker runs when the command has exited during a termination but
	// other members of its group are still alive.
	pollTicker   *time.Ticker
	killDeadline time.Time // after SIGKILL, when to stop waiting for the group

	exited bool       // the child has been reaped
	exit   *ExitError // its outcome, nil for status 0

	// stopPending is set when zklock stopped its own job because the
	// command was stopped; the command is continued on the next SIGCONT.
	stopPending bool
}

func (sv *supervisor) loop(ctx context.Context, contC <-chan os.Signal) error {
	events := sv.child.events
	signals := sv.spec.Signals
	lost := sv.spec.Lost
	revoked := sv.spec.Revoked
	ctxDone := ctx.Done()
	var maxC <-chan time.Time
	if sv.spec.MaxRuntime > 0 {
		t := time.NewTimer(sv.spec.MaxRuntime)
		defer t.Stop()
		maxC = t.C
	}
	for {
		var graceC, pollC <-chan time.Time
		if sv.graceTimer != nil {
			graceC = sv.graceTimer.C
		}
		if sv.pollTicker != nil {
			pollC = sv.pollTicker.C
		}
		select {
		case ev := <-events:
			if ev.err == nil && ev.status.Stopped() {
				sv.onStop(ev.status.StopSignal())
				continue
			}
			events, contC = nil, nil
			if done, err := sv.onExit(ev); done {
				return err
			}

		case sig, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			if ss, ok := sig.(syscall.Signal); ok {
				sv.signalGroup(ss)
			}

		case cause := <-lost:
			lost = nil // a closed channel would fire forever
			sv.onLost(cause)

		case cause := <-revoked:
			if sv.onRevoked(cause) {
				revoked = nil
			}

		case <-maxC:
			maxC = nil
			sv.onMaxRuntime()

		case <-ctxDone:
			ctxDone = nil
			var cause error
			if c := context.Cause(ctx); c != ctx.Err() {
				cause = c
			}
			sv.terminate(ctx.Err(), cause)

		case <-graceC:
			sv.onGrace()

		case <-pollC:
			if done, err := sv.onPoll(); done {
				return err
			}

		case <-contC:
			sv.onCont()
		}
	}
}

// onRevoked handles a revocation request: under Ignore a warning, and the
// supervisor listens for the next one; otherwise the command is stopped
// (done reports that no more requests matter).
func (sv *supervisor) onRevoked(cause error) (done bool) {
	if sv.spec.OnRevoke == Ignore {
		sv.warn(fmt.Sprintf("%v; the command keeps running (on-revoke policy: %s)", cause, sv.spec.OnRevoke))
		return false
	}
	if sv.term == nil {
		sv.warn(fmt.Sprintf("%v: %s", cause, sv.stopping()))
		sv.terminate(ErrLockRevoked, cause)
	}
	return true
}

// onMaxRuntime stops the command when its time is up, unless it is
// already being stopped for another reason.
func (sv *supervisor) onMaxRuntime() {
	if sv.term == nil {
		sv.warn(fmt.Sprintf("command still running after its maximum run time of %v: %s", sv.spec.MaxRuntime, sv.stopping()))
		sv.terminate(ErrMaxRuntime, nil)
	}
}

// onExit handles the child's end: the outcome is done (with err) unless a
// termination is under way and the rest of the group must still be waited
// for, polled from then on.
func (sv *supervisor) onExit(ev waitEvent) (done bool, err error) {
	sv.exited = true
	<-sv.child.done
	if ev.err != nil {
		// The child was reaped behind our back (SIGCHLD ignored,
		// someone waiting on any child): we can no longer tell
		// when it ends, so make sure it does.
		sv.signalGroup(syscall.SIGKILL)
		sv.reclaimTerminal()
		werr := fmt.Errorf("waiting for the command: %w", ev.err)
		if sv.term != nil {
			return true, errors.Join(sv.term, werr)
		}
		return true, werr
	}
	sv.exit = exitResult(ev.status)
	sv.reclaimTerminal()
	if sv.term == nil && sv.wd.stopped(time.Now()) {
		// The watchdog's deadline passed before zklock renewed
		// it (zklock was stopped or starved): the command's end
		// is the lock's loss. Whatever is left of its group
		// gets the same treatment as on any loss.
		var cause error = ErrUnrenewed
		if kill := sv.wd.killAt(); !kill.IsZero() {
			cause = &unrenewedError{kill: kill}
		}
		sv.onLost(cause)
	}
	if sv.term == nil {
		// The command ended by itself: what it left running in the
		// background is no longer the watchdog's, neither at a deadline
		// that zklock, releasing the lock, renews no more, nor at
		// zklock's death.
		sv.wd.disarm()
		if sv.exit == nil {
			return true, nil
		}
		return true, sv.exit
	}
	if !groupAlive(sv.pgid) {
		return true, sv.result()
	}
	if sv.term.Killed {
		sv.killDeadline = time.Now().Add(killWait)
	}
	sv.pollTicker = time.NewTicker(groupPoll)
	return false, nil
}

// onGrace ends the grace: SIGKILL to whatever is left of the group.
func (sv *supervisor) onGrace() {
	sv.graceTimer = nil
	sv.term.Killed = true
	if sv.grace > 0 {
		sv.warn(fmt.Sprintf("command still running %v after SIGTERM: sending SIGKILL", sv.grace))
	}
	sv.signalGroup(syscall.SIGKILL)
	if sv.exited {
		sv.killDeadline = time.Now().Add(killWait)
	}
}

// onPoll checks, after the child has exited during a termination, whether
// the rest of its group is gone, or has outlived SIGKILL for too long.
func (sv *supervisor) onPoll() (done bool, err error) {
	if !groupAlive(sv.pgid) {
		return true, sv.result()
	}
	if sv.term.Killed && time.Now().After(sv.killDeadline) {
		sv.warn(fmt.Sprintf("processes of the command (group %d) still exist %v after SIGKILL; not waiting for them", sv.pgid, killWait))
		return true, sv.result()
	}
	return false, nil
}

func (sv *supervisor) result() error {
	sv.term.Exit = sv.exit
	return sv.term
}

func (sv *supervisor) stopTimers() {
	if sv.graceTimer != nil {
		sv.graceTimer.Stop()
	}
	if sv.pollTicker != nil {
		sv.pollTicker.Stop()
	}
}

// signalGroup sends sig to the command's whole process group. ESRCH (the
// group is gone) is expected near the end and not worth reporting.
func (sv *supervisor) signalGroup(sig syscall.Signal) {
	_ = unix.Kill(-sv.pgid, sig)
}

func (sv *supervisor) warn(msg string) {
	if sv.spec.Warn == nil {
		return
	}
	// With `stty tostop`, writing to the terminal while the command owns
	// it would stop zklock; blocking SIGTTOU lets the write through.
	withoutSIGTTOU(func() { sv.spec.Warn(msg) })
}

// stopping describes the termination sequence for warnings.
func (sv *supervisor) stopping() string {
	if sv.grace == 0 {
		return "sending SIGTERM and SIGKILL"
	}
	return fmt.Sprintf("sending SIGTERM, SIGKILL in %v", sv.grace)
}

func (sv *supervisor) onLost(cause error) {
	what := "lock lost"
	if cause != nil {
		what += " (" + cause.Error() + ")"
	}
	if sv.spec.OnLost == Ignore {
		sv.warn(what + "; the command keeps running without it (on-lost policy: " + sv.spec.OnLost.String() + ")")
		return
	}
	var urgent interface{ Urgency() Urgency }
	if errors.As(cause, &urgent) && urgent.Urgency() == AtOnce {
		sv.killNow(what, cause)
		return
	}
	if sv.term == nil {
		sv.grace = sv.spec.LostKillGrace
		// A cause that says by when the command must be dead shortens
		// the grace to fit: zero if that moment has passed.
		var deadline interface{ KillBy() time.Time }
		if errors.As(cause, &deadline) {
			sv.grace = max(min(sv.grace, time.Until(deadline.KillBy()).Round(time.Millisecond)), 0)
		}
		sv.warn(what + ": " + sv.stopping())
	}
	sv.terminate(ErrLockLost, cause)
}

// killNow sends SIGKILL to the command's whole group at once: the lock may
// already be someone else's. A stop already under way with a grace (a
// revocation, --max-runtime, a foreseen loss) keeps its reason but loses
// the rest of its grace.
func (sv *supervisor) killNow(what string, cause error) {
	if sv.term != nil && sv.term.Killed {
		return
	}
	// The signal first, the words after: every moment counts.
	sv.signalGroup(syscall.SIGKILL)
	if sv.term == nil {
		sv.grace = 0
		sv.term = &TerminatedError{Reason: ErrLockLost, Cause: cause}
	}
	if sv.graceTimer != nil {
		sv.graceTimer.Stop()
		sv.graceTimer = nil
	}
	sv.term.Killed, sv.term.Grace = true, 0
	if sv.exited {
		sv.killDeadline = time.Now().Add(killWait)
	}
	sv.warn(what + ": sent SIGKILL at once")
}

// terminate starts the SIGTERM, grace, SIGKILL sequence.
func (sv *supervisor) terminate(reason, cause error) {
	if sv.term != nil {
		return
	}
	sv.term = &TerminatedError{Reason: reason, Cause: cause, Grace: sv.grace}
	sv.signalGroup(syscall.SIGTERM)
	// A stopped process keeps SIGTERM pending until continued; without
	// this a suspended command would only ever see the SIGKILL.
	sv.signalGroup(syscall.SIGCONT)
	sv.graceTimer = time.NewTimer(sv.grace)
}

// giveTerminal puts the command's group in the foreground.
func (sv *supervisor) giveTerminal() { _ = sv.tty.setForeground(sv.pgid) }

// reclaimTerminal gives the foreground back to zklock's group once the
// command has exited, if the command's group still holds it. If anyone
// else holds it (the shell, after a stop), it is not ours to take.
func (sv *supervisor) reclaimTerminal() {
	if sv.tty.jobControl() && sv.tty.foreground() == sv.pgid {
		_ = sv.tty.setForeground(sv.tty.pgrp)
	}
}

// onStop handles the command being stopped by a job-control signal. The
// terminal stopped the command's group, not zklock's, and the shell only
// watches zklock: zklock has to stop its own job for the shell to notice
// and take the terminal back.
func (sv *supervisor) onStop(sig syscall.Signal) {
	if sv.term != nil || !sv.tty.jobControl() {
		return // SIGKILL is coming anyway / nobody to hand control to
	}
	if sig != syscall.SIGTSTP && sig != syscall.SIGTTIN && sig != syscall.SIGTTOU {
		return // SIGSTOP: whoever sent it will send SIGCONT
	}
	tookBack := false
	fg := sv.tty.foreground()
	if fg == sv.pgid && sv.tty.setForeground(sv.tty.pgrp) == nil {
		fg, tookBack = sv.tty.pgrp, true
	}
	if fg == sv.tty.pgrp && sig != syscall.SIGTSTP {
		// The command wants the terminal and zklock has it (zklock was
		// brought to the foreground while the command ran behind it).
		sv.giveTerminal()
		sv.signalGroup(syscall.SIGCONT)
		return
	}
	if pgrpOrphaned(sv.tty.pgrp) {
		// Stopping zklock would be discarded by the kernel, and no shell
		// would continue it anyway.
		if sig == syscall.SIGTSTP {
			if tookBack {
				sv.giveTerminal()
			}
			sv.signalGroup(syscall.SIGCONT)
			return
		}
		sv.warn(fmt.Sprintf("the command is stopped (%s) waiting for the terminal, and zklock runs in the background without job control; nothing will continue it", SignalName(sig)))
		return
	}
	sv.stopPending = true
	// Stop zklock's whole group, as the terminal would have if the command
	// had been in it: the job may be a script that runs zklock. The
	// command is continued from onCont, when the shell continues us.
	_ = unix.Kill(0, sig)
}

// onCont runs when zklock receives SIGCONT: the shell resumed the job with
// fg (zklock's group now has the terminal) or bg (it does not).
func (sv *supervisor) onCont() {
	if sv.tty.foreground() == sv.tty.pgrp {
		sv.giveTerminal()
	}
	if sv.stopPending {
		sv.stopPending = false
		sv.signalGroup(syscall.SIGCONT)
	}
}
