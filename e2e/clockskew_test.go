package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// skewedEnsemble starts a 3-server ensemble whose server 3 runs its wall
// clock 2h behind (libfaketime), and returns it with that server and
// server 2, whose clock is right. With equal data, an election picks the
// highest id among the servers up: 3 while all are, 2 while 3 is down.
func skewedEnsemble(t *testing.T) (c *zktest.Cluster, slow, right *zktest.Server) {
	t.Helper()
	c = clockEnsemble(t, faketime(t, -2*time.Hour), "a slow clock")
	return c, c.Server(2), c.Server(1)
}

// faketime is the environment that runs a server's wall clock offset from
// this host's (libfaketime).
func faketime(t *testing.T, offset time.Duration) []string {
	t.Helper()
	zktest.NeedServer(t)
	env, err := zktest.Faketime(offset)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// clockEnsemble starts a 3-server ensemble whose server 3 runs with env,
// the environment of its clock, which what names in a failure.
func clockEnsemble(t *testing.T, env []string, what string) *zktest.Cluster {
	t.Helper()
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), startWithin)
	defer cancel()
	c, err := zktest.StartEnsemble(ctx, 3, zktest.Options{ServerEnv: map[int][]string{3: env}, StartTimeout: startWithin})
	if err != nil {
		t.Fatalf("cannot start a 3-server ensemble with %s on server 3: %v", what, err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// clockStandalone starts a standalone server that runs with env, the
// environment of its clock (nil: this host's).
func clockStandalone(t *testing.T, env []string) *zktest.Cluster {
	t.Helper()
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), startWithin)
	defer cancel()
	c, err := zktest.StartStandalone(ctx, zktest.Options{ServerEnv: map[int][]string{1: env}, StartTimeout: startWithin})
	if err != nil {
		t.Fatalf("cannot start a standalone server: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// lead makes s the ensemble's leader, as srvr reports it: it stops
// whichever server leads (the others elect one among themselves) and
// starts it again as a follower, until s leads.
func lead(t *testing.T, c *zktest.Cluster, s *zktest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), startWithin)
	defer cancel()
	for range 3 {
		l, err := c.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l == s {
			return
		}
		if err := l.Stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leader(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Restart(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("server %d would not lead", s.ID())
}

// TestOncePerClockSkew: --once-per on an ensemble whose servers' clocks
// disagree by 2h, in both directions. A success dated by the slow leader
// looks 2h old to a leader with the right clock: the job must not run
// again within its window of 1h. A success dated by the right clock looks
// 2h in the future to the slow leader: a 1m job is skipped, and says why,
// with both ages and the way out.
func TestOncePerClockSkew(t *testing.T) {
	c, slow, right := skewedEnsemble(t)
	dir := t.TempDir()
	// twice runs a job under one leader, then again under another, and
	// returns the second run; the job must have run once.
	twice := func(t *testing.T, path, window string, first, then *zktest.Server) result {
		t.Helper()
		runs := filepath.Join(dir, path[strings.LastIndexByte(path, '/')+1:])
		lead(t, c, first)
		if r := onceJob(t, c, path, window, runs); r.code != 0 {
			t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
		}
		lead(t, c, then)
		r := onceJob(t, c, path, window, runs)
		t.Logf("after the failover: exit %d; stderr: %s", r.code, r.stderr)
		if n := lines(runs); n != 1 {
			t.Fatalf("the job ran %d times within its window of %s, dated by server %d, then read by server %d", n, window, first.ID(), then.ID())
		}
		return r
	}

	t.Run("dated by the slow leader", func(t *testing.T) {
		r := twice(t, lockPath(t), "1h", slow, right)
		if r.code != 75 || !strings.Contains(r.stderr, "old by the servers' clocks") || !strings.Contains(r.stderr, "old by the clock of") {
			t.Errorf("exit %d, want 75 and both ages; stderr: %s", r.code, r.stderr)
		}
	})

	t.Run("dated by the right clock, read by the slow leader", func(t *testing.T) {
		path := lockPath(t)
		twice(t, path, "1m", right, slow)
		// Without -v, a skip in doubt still says why, in one line.
		r := runWithin(t, 60*time.Second, zklockOn(t, c, "run", "--once-per", "1m", "--path", path, "--", "true"))
		if r.code != 75 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "in the future by the servers' clocks") ||
			!strings.Contains(r.stderr, "old by the clock of") || !strings.Contains(r.stderr, "zklock forget --path "+path) {
			t.Errorf("exit %d, want 75 and one line with both ages and the way out; stderr: %s", r.code, r.stderr)
		}
	})
}

// TestOncePerStandaloneClockStep: a standalone server numbers every write
// in epoch 0, across restarts, so one epoch does not mean one clock there:
// a server restarted with its clock set 2h forward (a wrong clock fixed,
// a host restored) dates the next stamp 2h after a success it dated a
// minute ago. The job must not run again within its window of 1h.
func TestOncePerStandaloneClockStep(t *testing.T) {
	c := clockStandalone(t, faketime(t, -2*time.Hour))
	path, runs := lockPath(t), filepath.Join(t.TempDir(), "runs")
	if r := onceJob(t, c, path, "1h", runs); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	c.Server(0).SetEnv(nil)
	ctx, cancel := context.WithTimeout(t.Context(), startWithin)
	defer cancel()
	if err := c.Server(0).Restart(ctx); err != nil {
		t.Fatal(err)
	}
	r := onceJob(t, c, path, "1h", runs)
	if n := lines(runs); n != 1 {
		t.Fatalf("the job ran %d times within its window of 1h, its server's clock set 2h forward in between; stderr: %s", n, r.stderr)
	}
	if r.code != 75 || !strings.Contains(r.stderr, "old by the servers' clocks") || !strings.Contains(r.stderr, "old by the clock of") {
		t.Errorf("exit %d, want 75 and both ages; stderr: %s", r.code, r.stderr)
	}
}

// onceJob runs a --once-per job on c, -v, that appends a line to runs each
// time it runs.
func onceJob(t *testing.T, c *zktest.Cluster, path, window, runs string) result {
	t.Helper()
	return runWithin(t, 60*time.Second, zklockOn(t, c, "-v", "run", "--once-per", window, "--path", path,
		"--", "sh", "-c", `echo x >> "$1"`, "sh", runs))
}

// zklockOn is zklock with args on c. It needs no shared server, as zklock
// does: these tests start their own.
func zklockOn(t *testing.T, c *zktest.Cluster, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("zklock")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--servers", c.ConnectString()}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	return cmd
}

// startWithin bounds starting servers: JVMs on a loaded machine take
// their time, which these tests do not measure.
const startWithin = 4 * time.Minute

// pastWindow returns once window has passed since at, on this host's
// clock: the record's writer then reads an age past the window.
func pastWindow(at time.Time, window time.Duration) { time.Sleep(time.Until(at.Add(window))) }

// TestOncePerLeaderAhead: at most once, and not never. A success dated by
// a leader with the right clock, read under a leader 10s ahead, is 10s
// older by the servers' clocks than by its writer's, for good: once both
// ages have passed the window, the job must run again, not be skipped
// forever.
func TestOncePerLeaderAhead(t *testing.T) {
	c := clockEnsemble(t, faketime(t, 10*time.Second), "a clock 10s ahead")
	const window = 5 * time.Second
	path, runs := zktest.TestPath(t, cliRoot), filepath.Join(t.TempDir(), "runs")
	lead(t, c, c.Server(1))
	if r := onceJob(t, c, path, window.String(), runs); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	done := time.Now()
	lead(t, c, c.Server(2))
	pastWindow(done, window)
	r := onceJob(t, c, path, window.String(), runs)
	if r.code != 0 || lines(runs) != 2 {
		t.Fatalf("after the window, under a leader 10s ahead: exit %d, %d runs, want 0 and 2; stderr: %s", r.code, lines(runs), r.stderr)
	}
	if !strings.Contains(r.stderr, "running, as both ages have passed the window") {
		t.Errorf("-v does not say why the run goes ahead with the clocks in disagreement: %s", r.stderr)
	}
}

// TestOncePerStandaloneClockForward: a standalone server restarted with
// its clock 2h ahead dates the next stamp 2h after a success it dated
// seconds ago. Once the writer's age has passed the window too, the job
// must run: every age has passed it.
func TestOncePerStandaloneClockForward(t *testing.T) {
	env := faketime(t, 2*time.Hour)
	c := clockStandalone(t, nil)
	const window = 5 * time.Second
	path, runs := zktest.TestPath(t, cliRoot), filepath.Join(t.TempDir(), "runs")
	if r := onceJob(t, c, path, window.String(), runs); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	done := time.Now()
	c.Server(0).SetEnv(env)
	ctx, cancel := context.WithTimeout(t.Context(), startWithin)
	defer cancel()
	if err := c.Server(0).Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pastWindow(done, window)
	r := onceJob(t, c, path, window.String(), runs)
	if r.code != 0 || lines(runs) != 2 {
		t.Fatalf("after the window, the server's clock set 2h forward: exit %d, %d runs, want 0 and 2; stderr: %s", r.code, lines(runs), r.stderr)
	}
}

// TestOncePerLeaderStep: a leader whose clock steps 2h forward while it
// leads dates the stamp 2h after the success it dated a moment ago, in
// the same epoch. The job must not run again within its window of 1h: the
// writer's clock says the success is seconds old.
func TestOncePerLeaderStep(t *testing.T) {
	zktest.NeedServer(t)
	clock, env, err := zktest.NewClockFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := clockEnsemble(t, env, "a clock file")
	lead(t, c, c.Server(2))
	path, runs := zktest.TestPath(t, cliRoot), filepath.Join(t.TempDir(), "runs")
	if r := onceJob(t, c, path, "1h", runs); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	if err := clock.Set(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	// The step is in when the leader dates a write 1h ahead or more; the
	// write's epoch must still be the record's.
	conn := zktest.DialT(t, c.Addrs())
	probe := path + "-probe"
	if _, err := conn.Create(probe, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var st *zk.Stat
	zktest.Eventually(t, 30*time.Second, "the leader's clock to step 2h forward", func() bool {
		if st, err = conn.Set(probe, nil, -1); err != nil {
			t.Fatal(err)
		}
		return time.Until(time.UnixMilli(st.Mtime)) > time.Hour
	})
	_, rec, err := conn.Get(path + "/" + success.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Mzxid>>32 != st.Mzxid>>32 {
		t.Fatalf("the leader changed (epoch 0x%x, then 0x%x): the step is not within one epoch", rec.Mzxid>>32, st.Mzxid>>32)
	}
	r := onceJob(t, c, path, "1h", runs)
	if n := lines(runs); n != 1 || r.code != 75 {
		t.Fatalf("after the leader's clock stepped 2h forward: exit %d, %d runs, want 75 and 1; stderr: %s", r.code, n, r.stderr)
	}
	if !strings.Contains(r.stderr, "one leader's") || !strings.Contains(r.stderr, "old by the clock of") {
		t.Errorf("the skip does not say both ages: %s", r.stderr)
	}
}
