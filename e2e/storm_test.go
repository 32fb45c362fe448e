package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestOncePerFreshSkipsQueue: a --once-per run that can see a fresh
// success does not join the queue: with the lock held by another job, it
// exits 75 at once, instead of waiting its turn to read the record, and no
// node of its own ever appears in the queue.
func TestOncePerFreshSkipsQueue(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	if r := runWithin(t, 20*time.Second, zklock(t, "run", "--once-per", "1h", "--path", path, "--", "true")); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	holder, holderErr := startGated(t, dir, "h", "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	_, before, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	r := runWithin(t, 20*time.Second, zklock(t, "-v", "run", "--once-per", "1h", "--path", path, "--", "true"))
	if r.code != 75 || !strings.Contains(r.stderr, "not joining the queue") {
		t.Errorf("exit %d, want 75 without joining the queue; stderr: %s", r.code, r.stderr)
	}
	// The stamp is one node created and deleted in one transaction: two
	// changes to the children, none of them a contender that anyone saw.
	_, after, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Cversion - before.Cversion; got > 2 {
		t.Errorf("the lock path's children changed %d times: the run joined the queue", got)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
}

// TestOncePerLearnsWhileQueued: --once-per runs queued behind a job that
// succeeds learn of its success when it is recorded, and leave the queue
// (75), without waiting for the lock to reach each of them: here a job
// without --once-per takes the lock next and keeps it until they are gone.
func TestOncePerLearnsWhileQueued(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	first, firstErr := startGated(t, dir, "a", "run", "--once-per", "1h", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the first job's command", func() bool { return fileExists(filepath.Join(dir, "a.started")) })
	next, nextErr := startGated(t, dir, "b", "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the next job to queue", func() bool { return queueLen(conn, path) == 2 })
	var waiters []*syncBuffer
	var exits []<-chan exited
	for i := range 3 {
		c, stderr := startGated(t, dir, "w"+strconv.Itoa(i), "-v", "run", "--once-per", "1h", "--path", path)
		zktest.Eventually(t, 10*time.Second, "a waiter to queue", func() bool { return queueLen(conn, path) == 3+i })
		waiters = append(waiters, stderr)
		exits = append(exits, waitAsync(c))
	}
	touch(t, filepath.Join(dir, "a"))
	wantExit(t, first, firstErr, 0, "first job")
	zktest.Eventually(t, 10*time.Second, "the next job's command", func() bool { return fileExists(filepath.Join(dir, "b.started")) })
	for i, ch := range exits {
		select {
		case e := <-ch:
			if e.code != 75 || !strings.Contains(waiters[i].String(), "succeeded while this run waited") {
				t.Errorf("waiter %d: exit %d, want 75; stderr: %s", i, e.code, waiters[i])
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("waiter %d still waits for the lock after the job succeeded; stderr: %s", i, waiters[i])
		}
	}
	if n := queueLen(conn, path); n != 2 {
		t.Errorf("%d nodes in %s, want the holder's and the record", n, path)
	}
	touch(t, filepath.Join(dir, "b"))
	wantExit(t, next, nextErr, 0, "next job")
}

// TestOncePerStorm: 100 runs of one --once-per job started at once (a
// cron storm, at a scale for the suite; scripts/bench.sh runs 1,000): the
// job runs exactly once, every other run exits 75, never beside it, and
// nothing but the record is left. Requests per run, from the server's
// packet counter, are logged.
func TestOncePerStorm(t *testing.T) {
	const runs = 100
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	addr := server(t).Addrs()[0]
	before, err := zktest.Mntr(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	// The watches on the job's nodes, sampled through the storm: each
	// waiter watches its predecessor, its own node and the success
	// record, so they stay within three per run. Counted from wchp, on
	// the lock path and below: the server's own count takes in the
	// watches of tests running beside this one.
	maxWatches := 0
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if w, err := zktest.Wchp(t.Context(), addr); err == nil {
				n := 0
				for p, sessions := range w {
					if p == path || strings.HasPrefix(p, path+"/") {
						n += len(sessions)
					}
				}
				maxWatches = max(maxWatches, n)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	ran := filepath.Join(dir, "ran")
	codes := make([]int, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := zklockCmd(append([]string{"run", "--once-per", "1h", "--path", path, "--"},
				guarded(dir, `echo x >> "$1"; sleep 0.5`)...)...)
			if err != nil {
				errs[i] = err
				return
			}
			c.Args = append(c.Args, "sh", ran)
			out, err := c.CombinedOutput()
			if c.ProcessState == nil {
				errs[i] = fmt.Errorf("zklock did not start: %v", err)
				return
			}
			if codes[i] = c.ProcessState.ExitCode(); codes[i] != 0 && codes[i] != 75 {
				errs[i] = fmt.Errorf("exit %d: %s", codes[i], out)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stopSampling)
	<-sampled
	after, err := zktest.Mntr(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	zero := 0
	for _, c := range codes {
		if c == 0 {
			zero++
		}
	}
	if n := lines(ran); n != 1 || zero != 1 {
		t.Errorf("the job ran %d times and %d runs exited 0; want exactly once", n, zero)
	}
	packets := func(m map[string]string) int { n, _ := strconv.Atoi(m["zk_packets_received"]); return n }
	t.Logf("%d runs done in %s; %.1f requests per run (zk_packets_received, shared server); at most %d watches on its nodes",
		runs, took.Round(time.Millisecond), float64(packets(after)-packets(before))/runs, maxWatches)
	if maxWatches > 3*runs+20 {
		t.Errorf("%d watches on the job's nodes during a storm of %d runs, want at most 3 per run", maxWatches, runs)
	}
	if ch := children(t, conn, path); len(ch) != 1 || ch[0] != success.NodeName {
		t.Errorf("the lock path holds %v, want the record alone", ch)
	}
	if err := conn.Delete(path+"/"+success.NodeName, -1); err != nil {
		t.Fatal(err)
	}
	assertGone(t, conn, path)
}
