package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestSupersedeDeployQueue: one holder and ten contenders of a superseding
// queue, each arriving at least 50 ms after the one before and only once
// that one is in the queue. Each newcomer makes the waiter ahead leave:
// nine exit 75 with outcome superseded, naming the newer contender's pid;
// the holder runs on undisturbed; after it only the last runs, inside the
// overlap detector; and nothing is left in ZooKeeper.
func TestSupersedeDeployQueue(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	holder, holderErr := startGated(t, dir, "h", "run", "--supersede", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	const contenders = 10
	cmds := make([]*exec.Cmd, contenders)
	errs := make([]*syncBuffer, contenders)
	metrics := filepath.Join(dir, "first.prom")
	for i := range contenders {
		name := fmt.Sprintf("c%d", i)
		touch(t, filepath.Join(dir, name)) // its command ends at once, if it runs
		args := []string{"run", "--supersede", "--log-format", "json", "--path", path}
		if i == 0 {
			args = append(args, "--metrics-file", metrics)
		}
		began := time.Now()
		cmds[i], errs[i] = startGated(t, dir, name, args...)
		if i == 0 {
			zktest.Eventually(t, 10*time.Second, "the first waiter to queue", func() bool { return queueLen(conn, path) == 2 })
		} else {
			// The one before leaves only once this one's node is in the
			// queue behind it: arrival order is certain.
			wantExit(t, cmds[i-1], errs[i-1], 75, fmt.Sprintf("contender %d", i-1))
		}
		if d := 50*time.Millisecond - time.Since(began); d > 0 {
			time.Sleep(d) // the arrival spacing of the scenario, not a wait for a condition
		}
	}
	for i := range contenders - 1 {
		objs := jsonLines(t, errs[i].String())
		exit := firstEvent(t, objs, "exit")
		if exit["outcome"] != "superseded" || exit["exit_code"] != 75.0 {
			t.Errorf("contender %d: exit event %v, want outcome superseded, exit_code 75", i, exit)
		}
		newer := fmt.Sprintf("pid %d", cmds[i+1].Process.Pid)
		if !strings.Contains(errs[i].String(), newer) {
			t.Errorf("contender %d does not name the newer contender (%s): %s", i, newer, errs[i])
		}
		if fileExists(filepath.Join(dir, fmt.Sprintf("c%d.started", i))) {
			t.Errorf("superseded contender %d ran its command", i)
		}
	}
	if prom, err := os.ReadFile(metrics); err != nil || !strings.Contains(string(prom), `outcome="superseded"} 1`) {
		t.Errorf("metrics of the first contender (%v): %s", err, prom)
	}
	if fileExists(filepath.Join(dir, "c9.started")) {
		t.Fatal("the last contender ran while the holder held")
	}
	if n := queueLen(conn, path); n != 2 {
		t.Errorf("%d nodes in the queue, want the holder and one waiter", n)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	wantExit(t, cmds[contenders-1], errs[contenders-1], 0, "the last contender")
	if !fileExists(filepath.Join(dir, "c9.started")) {
		t.Error("the last contender did not run")
	}
	assertGone(t, conn, path)
}

// TestSupersedeNoStarvation: after the holder releases, a newcomer joins
// every 100 ms for 5 s. GitLab's newest_first deployed nothing while the
// newcomers kept arriving; here the waiter that becomes next at each
// release runs, so jobs keep running while the stream goes on, and the
// last newcomer runs after it. Every job runs inside the overlap detector:
// every exit is 0 (ran) or 75 (superseded), never 99.
func TestSupersedeNoStarvation(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	holder, holderErr := startGated(t, dir, "h", "run", "--supersede", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	// Each job records when it started and runs for 200 ms.
	job := `date +%s%N >> "$D/starts"; sleep 0.2`
	start := func() (*exec.Cmd, *syncBuffer, error) {
		c, err := zklockCmd(append([]string{"run", "--supersede", "--path", path, "--"}, guarded(dir, job)...)...)
		if err != nil {
			return nil, nil, err
		}
		c.Env = append(c.Env, "D="+dir)
		stderr := &syncBuffer{}
		c.Stderr = stderr
		return c, stderr, c.Start()
	}
	type ended struct {
		code   int
		stderr string
	}
	var (
		mu  sync.Mutex
		out []ended
		wg  sync.WaitGroup
	)
	launch := func() error {
		c, stderr, err := start()
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			mu.Lock()
			out = append(out, ended{code, stderr.String()})
			mu.Unlock()
		}()
		return nil
	}
	if err := launch(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "a waiter behind the holder", func() bool { return queueLen(conn, path) == 2 })
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	released := time.Now()
	const stream = 5 * time.Second
	n := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Since(released) < stream {
		if err := launch(); err != nil {
			t.Fatal(err)
		}
		n++
		<-tick.C
	}
	streamEnd := time.Now()
	wg.Wait()
	ran := 0
	for _, e := range out {
		switch e.code {
		case 0:
			ran++
		case 75:
			if !strings.Contains(e.stderr, "superseded by") {
				t.Errorf("exit 75 without saying it was superseded: %s", e.stderr)
			}
		case overlapExit:
			t.Errorf("OVERLAP: %s", e.stderr)
		default:
			t.Errorf("exit %d: %s", e.code, e.stderr)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "starts"))
	during := 0
	for _, s := range strings.Fields(string(b)) {
		var ns int64
		fmt.Sscan(s, &ns)
		if time.Unix(0, ns).Before(streamEnd) {
			during++
		}
	}
	t.Logf("%d newcomers over %s; %d jobs ran, %d of them while newcomers kept arriving", n, stream, ran, during)
	if ran != strings.Count(string(b), "\n") {
		t.Errorf("%d runs exited 0 but %d commands started", ran, strings.Count(string(b), "\n"))
	}
	// The waiter at the release runs, and each job's end hands the lock
	// to the waiter of that moment: with 200 ms jobs over 5 s, several.
	if during < 2 {
		t.Errorf("only %d jobs ran while newcomers kept arriving: the queue starved", during)
	}
	assertGone(t, conn, path)
}

// TestSupersedeMixedRefused: a plain run on a superseding queue, and a
// superseding run on a plain one, are refused with exit 64 and a hint,
// leaving nothing behind; the holder is not disturbed.
func TestSupersedeMixedRefused(t *testing.T) {
	conn := rawZK(t)
	for _, tc := range []struct {
		name         string
		holder, late []string
		hint         string
	}{
		{"plain after supersede", []string{"--supersede"}, nil, "add --supersede"},
		{"supersede after plain", nil, []string{"--supersede"}, "drop --supersede"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertRefusedBeside(t, conn, tc.holder, tc.late, "superseding queue", "the other queue's contender", tc.hint)
		})
	}
}
