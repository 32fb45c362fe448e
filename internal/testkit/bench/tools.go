//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// Tool is one lock tool under test: how to run a command under a named
// lock, and how to count the contenders queued on that lock.
type Tool struct {
	Key  string // zklock, minimal, etcd, flock, kazoo, curator
	Name string // as the report prints it
	// Class is "native" (a compiled binary), "python" or "jvm"; it picks
	// the counts, since a JVM start costs 100× a Go binary's.
	Class string
	// lockName maps a label ("uncontended", "contended-10", ...) to the
	// tool's own lock name: a znode path, an etcd key prefix, a file.
	lockName func(label string) string
	// argv runs cmd under the lock called name.
	argv     func(name string, cmd []string) []string
	extraEnv []string
	// count returns the number of contenders (holder and waiters) on name.
	count func(ctx context.Context, name string) (int, error)
}

// Argv is the full command line that runs cmd under the lock for label.
func (t *Tool) Argv(label string, cmd ...string) []string {
	return t.argv(t.lockName(label), cmd)
}

// Count counts the contenders on the lock for label.
func (t *Tool) Count(ctx context.Context, label string) (int, error) {
	return t.count(ctx, t.lockName(label))
}

// env holds what the tools need to find their servers and files.
type env struct {
	zkAddr   string
	etcdAddr string
	lockDir  string // flock's lock files
	logDir   string
	zkConn   *zk.Conn // the driver's own session, for counting queues
	etcdctl  string
	flock    string
	trueBin  string
	dateBin  string
	// stamp is the probe command that prints the time in nanoseconds: the
	// static internal/testkit/bench/stamp program, or `date +%s%N` without it.
	stamp   []string
	shBin   string
	timeout time.Duration
}

func newZklock(e *env, bin string) *Tool {
	return &Tool{
		Key: "zklock", Name: "zklock", Class: "native",
		lockName: func(l string) string { return "/bench/zklock/" + l },
		argv: func(name string, cmd []string) []string {
			return append([]string{bin, "run", "--servers", e.zkAddr, "--path", name, "--"}, cmd...)
		},
		count: e.zkChildren,
	}
}

// newZklockVariant is zklock's run with v's flags and environment.
func newZklockVariant(e *env, bin string, v Variant) *Tool {
	t := newZklock(e, bin)
	t.Key, t.Name, t.extraEnv = v.Key, v.Name, v.Env
	t.lockName = func(l string) string { return "/bench/" + v.Key + "/" + l }
	args := make([]string, len(v.Args))
	for i, a := range v.Args {
		args[i] = strings.ReplaceAll(a, "{logdir}", e.logDir)
	}
	t.argv = func(name string, cmd []string) []string {
		a := append([]string{bin, "run"}, args...)
		return append(append(a, "--servers", e.zkAddr, "--path", name, "--"), cmd...)
	}
	return t
}

// newMinimal is the minimal correct Go runner (cmd/zklock-min), the floor
// that every lock CLI on ZooKeeper shares.
func newMinimal(e *env, bin string) *Tool {
	return &Tool{
		Key: "minimal", Name: "minimal Go runner", Class: "native",
		lockName: func(l string) string { return "/bench/minimal/" + l },
		argv: func(name string, cmd []string) []string {
			return append([]string{bin, "--servers", e.zkAddr, "--path", name, "--"}, cmd...)
		},
		count: e.zkChildren,
	}
}

func newEtcd(e *env) *Tool {
	return &Tool{
		Key: "etcd", Name: "etcdctl lock", Class: "native",
		lockName: func(l string) string { return "bench/" + l },
		argv: func(name string, cmd []string) []string {
			return append([]string{e.etcdctl, "--endpoints", e.etcdAddr, "lock", name, "--"}, cmd...)
		},
		extraEnv: []string{"ETCDCTL_API=3"},
		count:    e.etcdKeys,
	}
}

func newFlock(e *env) *Tool {
	return &Tool{
		Key: "flock", Name: "flock(1)", Class: "native",
		lockName: func(l string) string { return filepath.Join(e.lockDir, l+".lock") },
		argv: func(name string, cmd []string) []string {
			return append([]string{e.flock, name}, cmd...)
		},
		count: flockContenders,
	}
}

// newRunner wraps one of internal/testkit/peers' runners: RUNNER --servers HOSTS
// --path P -- CMD [ARGS...].
func newRunner(e *env, key, name, class string, base []string) *Tool {
	return &Tool{
		Key: key, Name: name, Class: class,
		lockName: func(l string) string { return "/bench/" + key + "/" + l },
		argv: func(p string, cmd []string) []string {
			a := append([]string(nil), base...)
			a = append(a, "--servers", e.zkAddr, "--path", p, "--")
			return append(a, cmd...)
		},
		count: e.zkChildren,
	}
}

// zkChildren counts the children of a lock path (every child is a
// contender: all three ZooKeeper clients create only their own nodes there).
func (e *env) zkChildren(ctx context.Context, p string) (int, error) {
	if e.zkConn == nil {
		return 0, errors.New("no ZooKeeper session for counting")
	}
	ch, _, err := e.zkConn.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	return len(ch), err
}

// etcdKeys counts the keys under an etcdctl lock name: each contender puts
// NAME/<lease id>.
func (e *env) etcdKeys(ctx context.Context, name string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.etcdctl, "--endpoints", e.etcdAddr, "get", "--prefix", "--keys-only", name+"/")
	cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("etcdctl get: %w", err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, name+"/") {
			n++
		}
	}
	return n, nil
}

// flockContenders counts the holder and the blocked waiters of a lock file
// in /proc/locks: "1: FLOCK ADVISORY WRITE pid maj:min:inode 0 EOF", with
// "->" before FLOCK for a waiter.
func flockContenders(_ context.Context, path string) (int, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, err
	}
	suffix := ":" + strconv.FormatUint(ino, 10)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || !strings.Contains(l, "FLOCK") {
			continue
		}
		for _, x := range f {
			if strings.HasSuffix(x, suffix) && strings.Count(x, ":") == 2 {
				n++
				break
			}
		}
	}
	return n, nil
}

// waitCount polls t.Count until it reaches want.
func waitCount(ctx context.Context, t *Tool, label string, want int, within time.Duration) error {
	deadline := time.Now().Add(within)
	last, err := 0, error(nil)
	for {
		last, err = t.Count(ctx, label)
		if err == nil && last >= want {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("%s: counting contenders: %v", t.Name, err)
			}
			return fmt.Errorf("%s: %d of %d contenders queued after %s", t.Name, last, want, within)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// proc is one tool process.
type proc struct {
	cmd   *exec.Cmd
	start time.Time
	end   time.Time
	done  chan struct{}
	err   error
	log   string
	// cpu is the user and system time of the process and of every
	// descendant it waited for (a watchdog, the command), as wait4 reports
	// it; set once done is closed.
	cpu time.Duration
}

// exitCode is the process's exit code once done is closed; -1 if it was
// killed by a signal or could not be waited for.
func (p *proc) exitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// spawn starts argv with stdout to out (nil: /dev/null) and stderr
// appended to the log file, with a hard timeout. The parent-death signal
// makes sure no tool outlives a killed driver.
func (e *env) spawn(ctx context.Context, t *Tool, argv []string, stdin, out *os.File, logName string) (*proc, error) {
	return e.spawnFor(ctx, t, argv, stdin, out, logName, e.timeout)
}

// spawnFor is spawn with its own hard timeout.
func (e *env) spawnFor(ctx context.Context, t *Tool, argv []string, stdin, out *os.File, logName string, timeout time.Duration) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), t.extraEnv...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if out != nil {
		cmd.Stdout = out
	}
	logPath := filepath.Join(e.logDir, logName)
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: logPath}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	lf.Close()
	go func() {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case p.err = <-waited:
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			p.err = waitOrKill(cmd, waited)
		case <-timer.C:
			cmd.Process.Signal(syscall.SIGTERM)
			p.err = fmt.Errorf("timed out after %s: %v", timeout, waitOrKill(cmd, waited))
		}
		p.end = time.Now()
		if ps := cmd.ProcessState; ps != nil {
			if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
				p.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
		}
		close(p.done)
	}()
	return p, nil
}

func waitOrKill(cmd *exec.Cmd, waited chan error) error {
	select {
	case err := <-waited:
		return err
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		return <-waited
	}
}

// wait waits for the process and returns its wall time and an error that
// quotes the end of its log when it failed.
func (p *proc) wait() (time.Duration, error) {
	<-p.done
	if p.err != nil {
		return 0, fmt.Errorf("%s: %v%s", strings.Join(p.cmd.Args, " "), p.err, logTail(p.log, 3))
	}
	return p.end.Sub(p.start), nil
}

// run starts argv and waits for it.
func (e *env) run(ctx context.Context, t *Tool, argv []string, out *os.File, logName string) (time.Duration, error) {
	p, err := e.spawn(ctx, t, argv, nil, out, logName)
	if err != nil {
		return 0, err
	}
	return p.wait()
}

// logTail is the last n non-empty lines of a log, for error messages.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return ""
	}
	return " [" + path + ": " + strings.Join(lines, " | ") + "]"
}

// procRSS sums VmRSS and VmHWM (KiB) over pid and all its descendants.
func procRSS(pid int) (rss, hwm int64, n int) {
	for _, p := range append([]int{pid}, descendants(pid)...) {
		r, h, ok := statusKiB(p)
		if ok {
			rss += r
			hwm += h
			n++
		}
	}
	return rss, hwm, n
}

func statusKiB(pid int) (rss, hwm int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, found := strings.Cut(l, ":")
		if !found {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss, ok = n, true
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, ok
}

// procPss is Pss summed over pid and its descendants, from
// /proc/PID/smaps_rollup.
func procPss(pid int) int64 {
	sum, _ := smapsSum(pid, "Pss")
	return sum
}

// procPrivate is Private_Dirty summed over pid and its descendants, from
// /proc/PID/smaps_rollup: the memory these processes have to themselves
// and that the host cannot reclaim without swap. (File pages written and
// not yet written back count as dirty too, so the driver syncs the
// binaries it measures first.) n is the number of processes read.
func procPrivate(pid int) (kib int64, n int) { return smapsSum(pid, "Private_Dirty") }

// smapsSum sums one field of smaps_rollup over pid and its descendants.
func smapsSum(pid int, field string) (sum int64, n int) {
	for _, p := range append([]int{pid}, descendants(pid)...) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/smaps_rollup")
		if err != nil {
			continue
		}
		n++
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				sum += v
			}
		}
	}
	return sum, n
}

// descendants lists pid's children, grandchildren and so on, from
// /proc/PID/task/*/children.
func descendants(pid int) []int {
	var out []int
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/children")
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					todo = append(todo, c)
				}
			}
		}
	}
	return out
}
