package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// chaosDuration bounds the chaos run; the drain after it is bounded by the
// workers' --timeout.
const chaosDuration = 15 * time.Second

// calmLimit bounds how long the workers go on after the faults stop when
// no run has completed yet.
const calmLimit = 30 * time.Second

// TestChaos runs many holders and waiters on one lock against a 3-node
// ensemble while partitions (silent and reset) hit random workers and
// servers are killed and restarted. Two independent detectors must find no
// overlap: the flock(1) guard inside every command, and the recorded
// lifetimes of every command's process tree. Both are always checked, and
// an overlap is shown with what the holder before it said (its stderr:
// how long the quorum had been silent, whether zklock or its watchdog
// acted, and any lateness it measured), so that the deadline missed can
// be named. ZKLOCK_TEST_CHAOS_SEED replays a seed's faults (the timing of
// the runs around them is the machine's).
func TestChaos(t *testing.T) {
	c := ensemble(t)
	seed := time.Now().UnixNano()
	if v := os.Getenv("ZKLOCK_TEST_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("ZKLOCK_TEST_CHAOS_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	const workers = 5
	path := lockPath(t)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}

	// Each worker reaches every server through proxies of its own, so it
	// can be cut off alone.
	proxies := make([][]*zktest.Proxy, workers)
	for w := range proxies {
		for _, s := range c.Servers() {
			p := zktest.NewProxyT(t, s.Addr())
			proxies[w] = append(proxies[w], p)
		}
	}
	connString := func(w int) string {
		var a []string
		for _, p := range proxies[w] {
			a = append(a, p.Addr())
		}
		return strings.Join(a, ",")
	}

	ctx, cancel := context.WithTimeout(context.Background(), chaosDuration)
	defer cancel()
	var mu sync.Mutex
	codes := map[int]int{}
	exitOf := map[string]int{}
	stderrOf := map[string]string{}
	pidOf := map[int]int{} // zklock pid → worker
	// Errors from the workers and the fault goroutines, reported on the
	// test's goroutine once they are done.
	errs := make(chan error, workers+64)
	report := func(err error) {
		select {
		case errs <- err:
		default: // enough to show already
		}
	}
	// The faults stop with ctx. An unlucky seed on a loaded machine may
	// leave no run completed by then, and the test would prove nothing
	// about runs that complete: the workers go on, without faults, until
	// one has, for at most calmLimit more.
	var completed atomic.Int64
	calmUntil := time.Now().Add(chaosDuration + calmLimit)
	more := func() bool {
		return ctx.Err() == nil || (completed.Load() == 0 && time.Now().Before(calmUntil))
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; more(); i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				// Mostly short jobs (50ms to 250ms); every third one holds
				// for 2.5s, longer than the 1.3s silence that loses the
				// lock with a 2s session, so partitions hit running holders.
				beats := 5 + (w*7+i*13)%20
				if i%3 == 2 {
					beats = 250
				}
				script := `f="$D/runs/$1"; n=0; while [ $n -lt $2 ]; do date +%s%N >> "$f"; sleep 0.01; n=$((n+1)); done`
				cmd, err := zklockCmd(append([]string{"--servers", connString(w), "--session-timeout", "2s",
					"--connect-timeout", "3s", "run", "--timeout", "6s", "--path", path, "--"},
					append(guarded(dir, script), "sh", id, strconv.Itoa(beats))...)...)
				if err != nil {
					report(err)
					return
				}
				cmd.Env = append(cmd.Env, "D="+dir)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					report(err)
					return
				}
				mu.Lock()
				pidOf[cmd.Process.Pid] = w
				mu.Unlock()
				code, err := zktest.ExitCode(cmd.Wait())
				if err != nil {
					report(err)
					return
				}
				if code == 0 {
					completed.Add(1)
				}
				mu.Lock()
				delete(pidOf, cmd.Process.Pid)
				codes[code]++
				exitOf[id] = code
				stderrOf[id] = stderr.String()
				mu.Unlock()
			}
		}()
	}

	var faults sync.WaitGroup
	var downMu sync.Mutex
	down := 0 // servers down or restarting: at most one at a time
	partition := func(w int, silent bool, outage time.Duration) {
		for _, p := range proxies[w] {
			if silent {
				p.Blackhole()
			} else {
				p.Cut()
			}
		}
		faults.Add(1)
		go func() {
			defer faults.Done()
			time.Sleep(outage)
			for _, p := range proxies[w] {
				p.Heal()
			}
		}()
	}
	for ctx.Err() == nil {
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		switch rng.IntN(4) {
		case 0: // cut off the current holder long enough to lose the lock
			if w, ok := holderWorker(c, path, &mu, pidOf); ok {
				partition(w, rng.IntN(2) == 0, time.Duration(1500+rng.IntN(1500))*time.Millisecond)
			}
		case 1, 2: // cut off any worker, long or short
			partition(rng.IntN(workers), rng.IntN(2) == 0, time.Duration(300+rng.IntN(2700))*time.Millisecond)
		case 3: // kill a server and bring it back
			downMu.Lock()
			if down > 0 {
				downMu.Unlock()
				continue
			}
			down++
			downMu.Unlock()
			s := c.Server(rng.IntN(c.Len()))
			downtime := time.Duration(500+rng.IntN(1500)) * time.Millisecond
			s.Kill()
			faults.Add(1)
			go func() {
				defer faults.Done()
				time.Sleep(downtime)
				rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
				defer rcancel()
				if err := s.Restart(rctx); err != nil {
					report(fmt.Errorf("restart: %w", err))
				}
				downMu.Lock()
				down--
				downMu.Unlock()
			}()
		}
	}
	faults.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("exit codes: %v", codes)

	// The flock guard's verdict, then the lifetimes' (below): an overlap
	// is reported by both detectors or by one, never cut short.
	if codes[overlapExit] > 0 {
		t.Errorf("OVERLAP (flock guard): %d commands found the previous holder's command tree still alive", codes[overlapExit])
		for id, code := range exitOf {
			if code == overlapExit {
				t.Logf("%s found the lock's previous tree alive; its stderr:\n%s", id, stderrOf[id])
			}
		}
	}
	for code, n := range codes {
		switch code {
		case 0, 69, 75, 76: // ran; no session; timed out waiting; lost while running
		default:
			t.Errorf("%d runs exited %d", n, code)
		}
	}
	if codes[0] == 0 {
		t.Errorf("no run completed, even in the %s without faults after them", calmLimit)
	}

	// Each command's lifetime, from its first to its last timestamp.
	type life struct {
		id          string
		first, last int64
	}
	var lives []life
	entries, _ := os.ReadDir(runs)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(runs, e.Name()))
		var l life
		l.id = e.Name()
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				continue
			}
			if l.first == 0 || n < l.first {
				l.first = n
			}
			l.last = max(l.last, n)
		}
		if l.first != 0 {
			lives = append(lives, l)
		}
	}
	sort.Slice(lives, func(i, j int) bool { return lives[i].first < lives[j].first })
	minLostGap := time.Duration(-1)
	for i := 1; i < len(lives); i++ {
		prev, cur := lives[i-1], lives[i]
		if cur.first <= prev.last {
			t.Errorf("OVERLAP (lifetimes): %s started at %d, %s before %s's last sign of life at %d; %s exited %d and said:\n%s",
				cur.id, cur.first, time.Duration(prev.last-cur.first), prev.id, prev.last, prev.id, exitOf[prev.id], stderrOf[prev.id])
		}
		if exitOf[prev.id] == 76 {
			gap := time.Duration(cur.first - prev.last)
			if minLostGap < 0 || gap < minLostGap {
				minLostGap = gap
			}
		}
	}
	late := 0
	for _, e := range stderrOf {
		if strings.Contains(e, "possible overlap") {
			late++
		}
	}
	t.Logf("%d commands ran; %d holders lost the lock, %d of them reporting a possible overlap; smallest gap between a lost holder's last sign of life and the next holder's start: %s",
		len(lives), codes[76], late, minLostGap.Round(time.Millisecond))
}

// holderWorker finds the worker whose zklock holds the lock now, from the
// pid in the holder node's data.
func holderWorker(c *zktest.Cluster, path string, mu *sync.Mutex, pidOf map[int]int) (int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn, err := zktest.Dial(ctx, c.Addrs())
	if err != nil {
		return 0, false
	}
	defer conn.Close()
	children, _, err := conn.Children(path)
	if err != nil {
		return 0, false
	}
	q := recipe.Contenders(children)
	if len(q) == 0 {
		return 0, false
	}
	data, _, err := conn.Get(path + "/" + q[0].Name)
	if err != nil {
		return 0, false
	}
	d := owner.Decode(data)
	if !d.ByZklock {
		return 0, false
	}
	o := d.Owner
	mu.Lock()
	defer mu.Unlock()
	w, ok := pidOf[o.PID]
	return w, ok
}
