package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestOrderKeyOutdated: a run's order key is recorded on success; a later
// run with a lower key exits 75 without running (outcome outdated, in the
// exit event and the metrics), naming the key that already succeeded; an
// equal key (a retry) runs; forget clears the record and the lower key
// runs again. Without --supersede the queue is a plain one and the check
// applies all the same.
func TestOrderKeyOutdated(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	run := func(key string, extra ...string) result {
		t.Helper()
		args := append([]string{"run", "--order-key", key, "--log-format", "json", "--path", path}, extra...)
		c := zklock(t, append(append(args, "--"), guarded(dir, `echo "$K" >> "$D/ran"`)...)...)
		c.Env = append(c.Env, "D="+dir, "K="+key)
		return runWithin(t, time.Minute, c)
	}
	ran := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "ran"))
		return strings.Join(strings.Fields(string(b)), " ")
	}
	if r := run("10"); r.code != 0 {
		t.Fatalf("key 10: exit %d: %s", r.code, r.stderr)
	}
	// list shows the recorded key, and a holder's (a retry of key 10).
	holder, holderErr := startGated(t, dir, "h", "run", "--order-key", "10", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	if r := runWithin(t, time.Minute, zklock(t, "list", "--json", "--path", path)); r.code != 0 ||
		strings.Count(r.stdout, `"order_key": 10`) != 2 {
		t.Errorf("list --json (exit %d) does not show the key 10 of the holder and of the last success: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := runWithin(t, time.Minute, zklock(t, "list", "--path", path)); !strings.Contains(r.stdout, "holding, key 10") || !strings.Contains(r.stdout, "order key 10") {
		t.Errorf("list does not show the keys: %s%s", r.stdout, r.stderr)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "the holder")
	metrics := filepath.Join(dir, "job.prom")
	r := run("9", "--supersede", "--metrics-file", metrics)
	if r.code != 75 {
		t.Fatalf("key 9 after 10: exit %d, want 75: %s", r.code, r.stderr)
	}
	if exit := firstEvent(t, jsonLines(t, r.stderr), "exit"); exit["outcome"] != "outdated" {
		t.Errorf("key 9: exit event %v, want outcome outdated", exit)
	}
	if !strings.Contains(r.stderr, "order key 9 is outdated") || !strings.Contains(r.stderr, "succeeded with order key 10") {
		t.Errorf("key 9: the message does not name both keys: %s", r.stderr)
	}
	if prom, err := os.ReadFile(metrics); err != nil || !strings.Contains(string(prom), `outcome="outdated"} 1`) {
		t.Errorf("metrics (%v): %s", err, prom)
	}
	if r := run("10"); r.code != 0 {
		t.Errorf("key 10 again (a retry): exit %d: %s", r.code, r.stderr)
	}
	if r := run("-3"); r.code != 75 {
		t.Errorf("key -3: exit %d, want 75: %s", r.code, r.stderr)
	}
	// A run without a key that records a success keeps the key.
	if r := runWithin(t, time.Minute, zklock(t, "run", "--once-per", "1ms", "--path", path, "--", "true")); r.code != 0 {
		t.Fatalf("--once-per without a key: exit %d: %s", r.code, r.stderr)
	}
	if r := run("9"); r.code != 75 {
		t.Errorf("key 9 after a success without a key: exit %d, want 75: %s", r.code, r.stderr)
	}
	if r := runWithin(t, time.Minute, zklock(t, "forget", "--path", path)); r.code != 0 {
		t.Fatalf("forget: exit %d: %s", r.code, r.stderr)
	}
	if r := run("9"); r.code != 0 {
		t.Errorf("key 9 after forget: exit %d: %s", r.code, r.stderr)
	}
	if got, want := ran(), "10 10 9"; got != want {
		t.Errorf("the commands that ran had keys %q, want %q", got, want)
	}
	forgetAll(t, conn, path)
}

// TestOrderKeyPipelines is GitLab's outdated-deployment prevention with
// twenty pipelines: keys 1..20, started in shuffled order with random
// delays, each a deploy of random length, all under --supersede
// --order-key inside one overlap detector. The deploys that ran have
// strictly increasing keys; a run whose key is below a success that had
// ended before it started never runs (it exits 75, outdated, or
// superseded by a higher key while it waited); nothing else fails, and no
// contender node is left.
func TestOrderKeyPipelines(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	const n = 20
	var keys []int
	for _, k := range rng.Perm(n) {
		keys = append(keys, k+1)
	}
	type ended struct {
		key             int
		started, exited time.Time
		code            int
		stderr, outcome string
	}
	var (
		mu  sync.Mutex
		out []ended
		wg  sync.WaitGroup
	)
	for _, key := range keys {
		job := fmt.Sprintf(`echo %d >> "$D/deploys"; sleep 0.%03d`, key, rng.IntN(300))
		c := zklock(t, append([]string{"run", "--supersede", "--order-key", strconv.Itoa(key), "--log-format", "json", "--path", path, "--"},
			guarded(dir, job)...)...)
		c.Env = append(c.Env, "D="+dir)
		started := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := runResult(c, 2*time.Minute)
			e := ended{key: key, started: started, exited: time.Now(), code: r.code, stderr: r.stderr}
			for _, line := range strings.Split(r.stderr, "\n") {
				if strings.Contains(line, `"event":"exit"`) {
					_, after, _ := strings.Cut(line, `"outcome":"`)
					e.outcome, _, _ = strings.Cut(after, `"`)
				}
			}
			mu.Lock()
			out = append(out, e)
			mu.Unlock()
		}()
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond) // the scenario's random arrivals
	}
	wg.Wait()
	b, _ := os.ReadFile(filepath.Join(dir, "deploys"))
	var deployed []int
	for _, f := range strings.Fields(string(b)) {
		k, _ := strconv.Atoi(f)
		deployed = append(deployed, k)
	}
	t.Logf("arrival order %v; deployed %v", keys, deployed)
	for i := 1; i < len(deployed); i++ {
		if deployed[i] <= deployed[i-1] {
			t.Errorf("key %d deployed after key %d", deployed[i], deployed[i-1])
		}
	}
	counts := map[string]int{}
	ranKeys := map[int]bool{}
	for _, e := range out {
		counts[e.outcome]++
		switch {
		case e.code == 0:
			ranKeys[e.key] = true
		case e.code == overlapExit:
			t.Errorf("OVERLAP: key %d: %s", e.key, e.stderr)
		case e.code != 75 || (e.outcome != "outdated" && e.outcome != "superseded"):
			t.Errorf("key %d: exit %d (%s): %s", e.key, e.code, e.outcome, e.stderr)
		}
	}
	if len(ranKeys) != len(deployed) {
		t.Errorf("%d runs exited 0 but %d deploys ran", len(ranKeys), len(deployed))
	}
	for _, e := range out {
		for _, s := range out {
			if s.code == 0 && s.key > e.key && s.exited.Before(e.started) && ranKeys[e.key] {
				t.Errorf("key %d ran though key %d had succeeded before it started", e.key, s.key)
			}
		}
	}
	if counts["outdated"] == 0 {
		t.Logf("no run was outdated this time (outcomes %v)", counts)
	}
	t.Logf("outcomes %v", counts)
	if !ranKeys[n] {
		t.Errorf("the highest key, %d, did not deploy", n)
	}
	forgetAll(t, conn, path)
}

// forgetAll checks that only the success record is left under path, then
// deletes it, so that the container is reaped like any lock path.
func forgetAll(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	ch, _, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 1 || ch[0] != success.NodeName {
		t.Errorf("left under %s: %v, want only the success record", path, ch)
	}
	if err := conn.Delete(path+"/"+success.NodeName, -1); err != nil {
		t.Fatal(err)
	}
	assertGone(t, conn, path)
}
