//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// conflictExit is the hold command's exit when its kernel lock was taken:
// a predecessor's process tree is still alive beside it.
const conflictExit = 99

// beatEvery is how often a command writes a sign of life. The lifetime
// detector is as fine as this: an overlap shorter than a beat can hide
// between two.
const beatEvery = 10 * time.Millisecond

// mono is CLOCK_MONOTONIC in nanoseconds, the clock every process of a run
// shares.
func mono() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// kernelLock is one `--lock FILE:MODE` of the hold command: ex, sh, or
// slots:N (one of N files FILE.0 … FILE.N-1, for a semaphore).
func kernelLock(spec string) (*os.File, error) {
	file, mode, _ := strings.Cut(spec, ":")
	try := func(name string, how int) (*os.File, error) {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	switch {
	case mode == "ex":
		return try(file, unix.LOCK_EX)
	case mode == "sh":
		return try(file, unix.LOCK_SH)
	case strings.HasPrefix(mode, "slots:"):
		n, err := strconv.Atoi(strings.TrimPrefix(mode, "slots:"))
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			if f, err := try(fmt.Sprintf("%s.%d", file, i), unix.LOCK_EX); err == nil {
				return f, nil
			}
		}
		return nil, fmt.Errorf("all %d slots taken", n)
	}
	return nil, fmt.Errorf("bad lock mode %q", mode)
}

// hold is the command every workload runs under zklock. It takes its
// kernel locks without waiting (a failure is the first detector's
// verdict), writes what zklock told it and a beat every beatEvery to its
// life file, and exits with --exit after --for. A --hard command ignores
// SIGTERM and holds through a grandchild that beats beside it, so zklock
// must reach the whole process group with SIGKILL.
func hold(args []string) int {
	fs := flag.NewFlagSet("hold", flag.ContinueOnError)
	var locks multi
	fs.Var(&locks, "lock", "FILE:ex|sh|slots:N, repeatable")
	out := fs.String("out", "", "life file")
	dur := fs.Duration("for", time.Second, "how long to hold")
	hard := fs.Bool("hard", false, "ignore SIGTERM and hold through a grandchild")
	code := fs.Int("exit", 0, "exit code")
	pool := fs.String("pool", "", "FILE: also lock FILE.MEMBER exclusive for each member ZKLOCK_RESOURCES names")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *hard {
		signal.Ignore(syscall.SIGTERM)
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hold:", err)
		return 2
	}
	fmt.Fprintf(f, "pid %d\nsession %s\ntokens %s\t%s\n", os.Getpid(), os.Getenv("ZKLOCK_SESSION_ID"),
		os.Getenv("ZKLOCK_PATHS"), os.Getenv("ZKLOCK_FENCING_TOKENS"))
	if *pool != "" {
		// The members are zklock's choice, known only now: the kernel
		// detector locks what it was told it holds.
		members := os.Getenv("ZKLOCK_RESOURCES")
		fmt.Fprintf(f, "resources %s\n", members)
		for _, m := range strings.Split(members, ",") {
			locks = append(locks, *pool+"."+m+":ex")
		}
	}
	var held []*os.File
	for _, l := range locks {
		k, err := kernelLock(l)
		if err != nil {
			fmt.Fprintf(f, "conflict %d %s %v\n", mono(), l, err)
			return conflictExit
		}
		held = append(held, k)
	}
	deadline := mono() + int64(*dur)
	var child *exec.Cmd
	if *hard {
		child = exec.Command("/proc/self/exe", "beat", "--out", *out, "--until", strconv.FormatInt(deadline, 10))
		child.ExtraFiles = held // the grandchild holds the kernel locks too
		if err := child.Start(); err != nil {
			fmt.Fprintf(f, "error %v\n", err)
			return 2
		}
		fmt.Fprintf(f, "pid %d\n", child.Process.Pid)
	}
	beat(f, deadline)
	if child != nil {
		// The grandchild ends with the command: one left behind would hold
		// the kernel lock after zklock released the lock, by design.
		child.Wait()
	}
	return *code
}

// beatCmd is the grandchild of a --hard hold.
func beatCmd(args []string) int {
	fs := flag.NewFlagSet("beat", flag.ContinueOnError)
	out := fs.String("out", "", "life file")
	until := fs.Int64("until", 0, "monotonic deadline")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	signal.Ignore(syscall.SIGTERM)
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 2
	}
	beat(f, *until)
	return 0
}

// beat writes a sign of life every beatEvery until deadline: one write of
// one line, appended, so that the beats of a command and its grandchild
// never tear each other.
func beat(f *os.File, deadline int64) {
	for {
		now := mono()
		f.WriteString("b " + strconv.FormatInt(now, 10) + "\n")
		if now >= deadline {
			return
		}
		time.Sleep(min(beatEvery, time.Duration(deadline-now)))
	}
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
