//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/testkit/robust"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// The suite's lock paths, all under root, which must be empty at the end.
const (
	root      = "/robust"
	pathEx    = root + "/exclusive"
	pathMulti = root + "/multi"
	pathRW    = root + "/rw"
	pathSem   = root + "/semaphore"
	pathOnce  = root + "/once"
	pathQueue = root + "/deploy"
	pathLong  = root + "/long"
	pathPool  = root + "/pool"
)

// onceWindow is the `--once-per` workload's window: short, so that a run
// sees many windows.
const onceWindow = 2 * time.Second

// semLimit is the semaphore workload's `--limit`.
const semLimit = 2

// paths are the rules the checker judges each path by.
var paths = []robust.Path{
	{Name: pathEx, Kind: robust.Exclusive},
	{Name: pathMulti, Kind: robust.Exclusive},
	{Name: pathRW, Kind: robust.ReadWrite},
	{Name: pathSem, Kind: robust.Semaphore, Limit: semLimit},
	{Name: pathOnce, Kind: robust.OncePer, Window: onceWindow},
	{Name: pathQueue, Kind: robust.Exclusive, Supersede: true},
	{Name: pathLong, Kind: robust.Exclusive},
	{Name: pathPool, Kind: robust.Pool, Members: poolMembers},
}

// job is one zklock invocation a workload asks for.
type job struct {
	args  []string // zklock's subcommand and flags, before "--"
	paths []string
	role  robust.Role
	locks []string // the hold command's kernel locks
	hold  time.Duration
	hard  bool
	exit  int
	// nested runs the hold command under a second zklock on the same
	// path, which re-enters the lock its parent holds.
	nested []string
	pause  time.Duration // before the next job
	// orderKey is the run's --order-key, nil for none.
	orderKey *int64
	// pool is the kernel lock prefix of a pool's members (hold --pool),
	// take how many members the run asks for.
	pool string
	take int
}

// workload is a named crowd: how many workers, and each one's next job.
type workload struct {
	name    string
	workers int
	next    func(w int, rng *rand.Rand, s *suite) job
}

// holdTime is a job's hold: mostly short, and one in three longer than
// the silence (2/3 T) after which zklock gives a lock up, so that faults
// hit running holders.
func holdTime(rng *rand.Rand, t time.Duration) time.Duration {
	if rng.IntN(3) == 0 {
		return t*3/4 + time.Duration(rng.Int64N(int64(t/2)))
	}
	return 20*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
}

// kernelFile is the file the kernel detector locks for path.
func (s *suite) kernelFile(path string) string {
	return filepath.Join(s.dir, "kernel", strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "_"))
}

// kernel is a hold command's --lock for path in mode.
func (s *suite) kernel(path, mode string) string { return s.kernelFile(path) + ":" + mode }

func runArgs(s *suite, sub string, extra ...string) []string {
	return append([]string{sub, "--timeout", s.waitTimeout().String()}, extra...)
}

var workloads = []workload{
	{"exclusive", 3, func(w int, rng *rand.Rand, s *suite) job {
		return job{args: runArgs(s, "run", "--path", pathEx), paths: []string{pathEx}, role: robust.Holder,
			locks: []string{s.kernel(pathEx, "ex")}, hold: holdTime(rng, s.T), hard: rng.IntN(4) == 0}
	}},
	{"tryrun", 2, func(w int, rng *rand.Rand, s *suite) job {
		return job{args: []string{"tryrun", "--path", pathEx}, paths: []string{pathEx}, role: robust.Holder,
			locks: []string{s.kernel(pathEx, "ex")}, hold: time.Duration(rng.IntN(100)) * time.Millisecond,
			pause: time.Duration(50+rng.IntN(200)) * time.Millisecond}
	}},
	{"shared", 3, func(w int, rng *rand.Rand, s *suite) job {
		if w == 0 {
			return job{args: runArgs(s, "run", "--flavor", "curator-rw", "--path", pathRW), paths: []string{pathRW}, role: robust.Writer,
				locks: []string{s.kernel(pathRW, "ex")}, hold: holdTime(rng, s.T), hard: rng.IntN(4) == 0}
		}
		return job{args: runArgs(s, "run", "--shared", "--path", pathRW), paths: []string{pathRW}, role: robust.Reader,
			locks: []string{s.kernel(pathRW, "sh")}, hold: holdTime(rng, s.T)}
	}},
	{"limit", 3, func(w int, rng *rand.Rand, s *suite) job {
		return job{args: runArgs(s, "run", "--limit", strconv.Itoa(semLimit), "--path", pathSem), paths: []string{pathSem},
			role: robust.Holder, locks: []string{s.kernel(pathSem, "slots:"+strconv.Itoa(semLimit))}, hold: holdTime(rng, s.T)}
	}},
	{"multi", 2, func(w int, rng *rand.Rand, s *suite) job {
		if w == 0 {
			return job{args: runArgs(s, "run", "--path", pathMulti, "--path", pathEx), paths: []string{pathEx, pathMulti},
				role: robust.Holder, locks: []string{s.kernel(pathEx, "ex"), s.kernel(pathMulti, "ex")}, hold: holdTime(rng, s.T)}
		}
		return job{args: runArgs(s, "run", "--path", pathMulti), paths: []string{pathMulti}, role: robust.Holder,
			locks: []string{s.kernel(pathMulti, "ex")}, hold: holdTime(rng, s.T), hard: rng.IntN(3) == 0}
	}},
	{"once", 2, func(w int, rng *rand.Rand, s *suite) job {
		j := job{args: runArgs(s, "run", "--once-per", onceWindow.String(), "--path", pathOnce), paths: []string{pathOnce},
			role: robust.Holder, locks: []string{s.kernel(pathOnce, "ex")}, hold: time.Duration(rng.IntN(200)) * time.Millisecond,
			pause: time.Duration(rng.IntN(500)) * time.Millisecond}
		if rng.IntN(4) == 0 {
			j.exit = 3 // a failure: the window does not start
		}
		return j
	}},
	{"reentry", 1, func(w int, rng *rand.Rand, s *suite) job {
		return job{args: runArgs(s, "run", "--path", pathEx), paths: []string{pathEx}, role: robust.Holder,
			locks: []string{s.kernel(pathEx, "ex")}, hold: holdTime(rng, s.T), nested: []string{"run", "--path", pathEx}}
	}},
	// revoke is the revoker alone (suite.revoker), no crowd of its own.
	{"revoke", 0, nil},
	{"supersede", 3, supersedeJob},
	{"long", 2, longJob},
	{"pool", 4, poolJob},
}

// worker runs one workload's jobs, one after the other, until ctx ends.
func (s *suite) worker(ctx context.Context, wl workload, w, slot int, rng *rand.Rand) {
	for i := 0; ctx.Err() == nil; i++ {
		j := wl.next(w, rng, s)
		s.runJob(fmt.Sprintf("%s%d-%d", wl.name, w, i), wl.name, slot, j)
		if j.pause > 0 {
			time.Sleep(j.pause)
		}
	}
}

// runJob starts one zklock, waits for it and records it.
func (s *suite) runJob(id, wl string, slot int, j job) {
	life := filepath.Join(s.dir, "lives", id)
	hold := []string{s.self, "hold", "--out", life, "--for", j.hold.String(), "--exit", strconv.Itoa(j.exit)}
	for _, l := range j.locks {
		hold = append(hold, "--lock", l)
	}
	if j.hard {
		hold = append(hold, "--hard")
	}
	if j.pool != "" {
		hold = append(hold, "--pool", j.pool)
	}
	args := append(s.common(), j.args...)
	args = append(args, "--")
	if j.nested != nil {
		args = append(append(append(args, s.zklock), j.nested...), "--")
	}
	args = append(args, hold...)
	cmd := exec.Command(s.zklock, args...)
	cmd.Env = append(os.Environ(), "ZKLOCK_SERVERS="+s.connString(slot), "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	run := robust.Run{ID: id, Workload: wl, Paths: j.paths, Role: j.role, CommandExit: j.exit, Host: s.host, OrderKey: j.orderKey,
		Take: j.take}
	run.Invoked, run.WallInvoked = mono(), time.Now()
	if err := cmd.Start(); err != nil {
		s.fail(fmt.Errorf("start zklock: %w", err))
		return
	}
	run.PID = cmd.Process.Pid
	s.procs.add(run.PID, slot)
	err := cmd.Wait()
	run.Exited, run.WallExited = mono(), time.Now()
	run.Killed = s.procs.remove(run.PID)
	run.Exit = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		run.Signal = ws.Signal().String()
	}
	if err != nil && run.Exit == 0 {
		run.Exit = -1
	}
	os.WriteFile(life+".stderr", stderr.Bytes(), 0o644)
	said(&run, stderr.String())
	s.readLife(life, &run)
	s.record(robust.Record{Run: &run})
}

// said reads what zklock said on stderr into its run.
func said(run *robust.Run, stderr string) {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	run.Stderr = lines[len(lines)-1]
	run.Revoked = strings.Contains(stderr, `"event":"revoked"`)
	run.Unrecorded = strings.Contains(stderr, "could not record the success")
	run.SupersededBy = robust.ParseSuperseded(stderr)
	run.Outcome = exitOutcome(lines)
}

// exitOutcome is the outcome of zklock's exit event, the last of its
// JSON lines that has one.
func exitOutcome(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		var ev struct{ Event, Outcome string }
		if json.Unmarshal([]byte(lines[i]), &ev) == nil && ev.Event == "exit" {
			return ev.Outcome
		}
	}
	return ""
}

// normSession writes a session id one way, as zklock and the server's log
// may not agree on leading zeros.
func normSession(id string) string {
	n, err := zktest.ParseSessionID(id)
	if err != nil {
		return id
	}
	return fmt.Sprintf("0x%x", uint64(n))
}

// readLife reads what the hold command wrote: its pids, session, tokens,
// a conflict, and its beats.
func (s *suite) readLife(name string, run *robust.Run) {
	f, err := os.Open(name)
	if err != nil {
		return // the command never ran
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		switch key {
		case "b":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				continue // a line torn by a SIGKILL
			}
			if run.Life == nil {
				run.Life = &robust.Life{First: n, Last: n}
			}
			run.Life.First, run.Life.Last = min(run.Life.First, n), max(run.Life.Last, n)
		case "pid":
			if pid, err := strconv.Atoi(val); err == nil {
				s.procs.seen(pid)
			}
		case "session":
			run.Session = normSession(val)
		case "resources":
			if val != "" {
				run.Resources = strings.Split(val, ",")
			}
		case "tokens":
			ps, ts, _ := strings.Cut(val, "\t")
			pf, tf := strings.Fields(ps), strings.Fields(ts)
			for i := range min(len(pf), len(tf)) {
				// A pool's tokens are its members', one level below it.
				ours := slices.Contains(run.Paths, pf[i]) || run.Take > 0 && slices.Contains(run.Paths, path.Dir(pf[i]))
				if n, err := strconv.ParseInt(tf[i], 10, 64); err == nil && ours {
					if run.Tokens == nil {
						run.Tokens = map[string]int64{}
					}
					run.Tokens[pf[i]] = n
				}
			}
		case "conflict":
			run.Conflict = true
			at, _, _ := strings.Cut(val, " ")
			if n, err := strconv.ParseInt(at, 10, 64); err == nil {
				run.Life = &robust.Life{First: n, Last: n}
			}
		}
	}
}
