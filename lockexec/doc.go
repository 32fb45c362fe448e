//go:build unix

// Package lockexec runs and supervises the command that zklock executes
// while it holds a lock. It knows nothing about ZooKeeper: the caller says
// when the lock is lost (Spec.Lost) and which signals zklock received
// (Spec.Signals), and Supervise turns that into signals for the command.
//
// It is zklock's, and makes no compatibility promise: it is a top-level
// package so that its design reads at a glance, not as an API for other
// programs, and its exported names change with zklock.
//
// # Process groups
//
// The command always gets a process group of its own (Setpgid), and every
// signal Supervise sends goes to the whole group with kill(-pgid, sig). A command
// is often a shell script whose real work happens in grandchildren: if only
// the direct child were signalled, `sh -c 'a & b; wait'` would die on
// SIGTERM and leave a and b running without the lock. With a group, lock
// loss, --max-runtime, context cancellation and forwarded signals reach the
// whole tree. A separate group is also what lets the group be signalled
// without hitting zklock itself.
//
// When Supervise itself stops the command (lock lost with policy Terminate,
// --max-runtime, ctx cancelled) it sends SIGTERM followed by SIGCONT (so a
// stopped group wakes up to handle the SIGTERM), waits Spec.KillGrace for
// the group to empty, then sends SIGKILL to whatever is left. The grace
// covers the whole group, not just the direct child: a wrapper shell
// usually dies at once on SIGTERM while its children are still cleaning up,
// and they get the rest of the grace too. A lock loss whose cause says
// Urgency AtOnce (the lock may already be someone else's) gets SIGKILL to
// the whole group at once instead, with no SIGTERM and no grace.
//
// When the command exits on its own, Supervise returns at once and leaves
// anything the command started in the background alone: `zklock run --path
// /l -- service start` must not kill the daemon it starts. The lock is then
// released, so such processes run on unlocked. (flock(1) kills nothing
// either, but its lock lives in the open file the children inherit, and so
// stays held until they exit, unless -o closes it for the command.)
//
// # Terminals and Ctrl-C
//
// With a separate group, the terminal would normally deliver Ctrl-C (SIGINT)
// and Ctrl-\ (SIGQUIT) to zklock's group only, and zklock would forward
// them. But forwarding alone is not right either: if the command were in
// zklock's group it would see the signal twice (once from the terminal,
// once forwarded). So when stdin is zklock's controlling terminal and
// zklock's group is that terminal's foreground group, Supervise starts the
// command with its group in the foreground (SysProcAttr.Foreground). The
// terminal then sends SIGINT/SIGQUIT/SIGTSTP to the command's group only,
// and zklock, not being in that group, receives nothing to forward: each
// Ctrl-C reaches the command exactly once. Signals zklock does receive (kill
// from another process, a hangup from the session leader) are forwarded.
// When the command exits, Supervise gives the foreground back to zklock's group
// if the command's group still has it. Without a terminal, or when zklock
// runs in the background, the command's group is never put in the
// foreground and zklock forwards what it gets.
//
// Calling tcsetpgrp from a background group raises SIGTTOU, which would
// stop zklock; Supervise blocks SIGTTOU on the calling thread around such calls
// (Linux; elsewhere it ignores the signal process-wide for the duration).
// For the same reason Spec.Warn is called with SIGTTOU blocked: with
// `stty tostop`, a warning written while the command owns the terminal
// would otherwise stop zklock in the middle of killing a command whose lock
// is gone.
//
// Note that SysProcAttr.Foreground takes Ctty as a descriptor in zklock's
// process, not in the child: Supervise passes Spec.Stdin's own descriptor.
//
// # Job control (Ctrl-Z)
//
// Ctrl-Z stops the command's group, but the shell waits for zklock, which
// is still running, so the shell would never get the terminal back. Supervise
// watches for the command being stopped by SIGTSTP, SIGTTIN or SIGTTOU
// while stdin is zklock's controlling terminal, takes the foreground back
// and stops zklock's own group with the same signal, so the shell sees the
// job stopped. When the shell continues the job (SIGCONT), Supervise gives the
// terminal to the command again if zklock was brought to the foreground
// (fg), and continues the command's group. If the command stopped for
// terminal input while zklock holds the foreground, Supervise simply hands the
// foreground over. If zklock's group is orphaned (no job-control shell
// above it, e.g. `ssh -t host zklock ...`), the kernel would discard the
// stop, so Supervise continues the command instead: Ctrl-Z does nothing there,
// as for any program in that situation.
//
// A stopped zklock does not talk to ZooKeeper: a suspension longer than the
// session timeout loses the lock, and the lost-lock policy applies as soon
// as the job is continued. Stops by SIGSTOP are left alone (whoever sent it
// will continue the command). Callers must not catch SIGTSTP, SIGTTIN or
// SIGTTOU, or zklock cannot stop itself.
//
// # Parent death
//
// On Linux the direct child gets Pdeathsig=SIGKILL, so it dies if zklock
// is SIGKILLed. The kernel sends it when the thread that created the child
// exits, not the process, so the child is started from a goroutine that
// locks its OS thread and keeps it locked until the child has been waited
// for. Only the direct child is covered: its own children are not; the
// watchdog covers them.
//
// # The watchdog
//
// A Watchdog (watchdog_unix.go) is a dead man's switch for the command's
// whole group, in a process of its own: it kills the group when zklock
// dies (its instruction pipe ends) or stops renewing the deadlines (zklock
// frozen or starved), and stands down when the command ends by itself.
// Supervise arms it with the group on the forking thread, as soon as the
// fork returns, and the command is not executed until then: the forked
// child first executes the watchdog's own program as a gate, which
// waits on a pipe for zklock's word and then executes the command, or
// exits without executing anything if the pipe ends first (zklock died).
// Without the gate, a zklock SIGKILLed between the command's exec and the
// arm would leave the command's children unguarded. The gate costs an
// exec of a small program: about 2.5 ms more per command with the
// companion, 5 ms with zklock's own executable (medians on a loaded
// 2-core machine). It is one design on every platform: plain Go, started
// with fork and exec, never forked from zklock's multithreaded process
// without an exec (which Go does not support). Its loop is
// internal/deadman, hosted by the program zklock-watchdog, which the
// packages install beside zklock and which starts in less than half the
// time of zklock's own executable; where it is missing, zklock's own
// executable runs the same loop (IsWatchdog, WatchdogMain). Its end before
// zklock is done with it is reported at once (Watchdog.Gone), so that the
// caller can warn, and a watchdog that is gone is never said to have
// stopped the command.
//
// # Platforms
//
// The package is Unix-only: process groups, the controlling terminal and
// job control have no equivalent elsewhere, and zklock is released for
// Linux and macOS. Linux gets /proc (live members of a group, the binary
// that is running), CLOCK_BOOTTIME (internal/deadman) and a per-thread
// SIGTTOU mask; the
// other Unix files hold the weaker fallbacks that macOS uses.
package lockexec
