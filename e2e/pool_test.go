package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// poolBody is a pool job's command, run under one flock detector per
// member it holds (poolJob): it marks its members busy, records how many
// members are busy in all, and, once it has slept its length, waits until
// some job has seen $WANT members busy at once, so that the pool is proved
// full at some point whatever the machine's load.
const poolBody = `for m in $(echo "$ZKLOCK_RESOURCES" | tr , ' '); do touch "$D/busy/$m"; done
echo "$ZKLOCK_RESOURCES|$(echo $ZKLOCK_PATHS | tr ' ' ,)" >> "$D/held"
n=$(ls "$D/busy" | wc -l); echo $n >> "$D/counts"
if [ "$n" -ge "$WANT" ]; then touch "$D/seen"; fi
sleep "$1"
while [ ! -e "$D/seen" ]; do sleep 0.01; done
for m in $(echo "$ZKLOCK_RESOURCES" | tr , ' '); do rm "$D/busy/$m"; done`

// poolJob wraps poolBody in a kernel flock per member held: a second
// holder of a member while any process of the first lives exits 99.
const poolJob = `cmd=""
for m in $(echo "$ZKLOCK_RESOURCES" | tr , ' '); do cmd="$cmd flock -n -E 99 $D/det-$m"; done
exec $cmd sh "$D/body.sh" "$1"`

// runPool runs jobs contenders for take of members at path, each for a
// random 50 to 300ms, and returns what each held (ZKLOCK_RESOURCES and
// ZKLOCK_PATHS) and the most members busy at once.
func runPool(t *testing.T, path string, members []string, take, jobs, want int) (held []string, most int) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "busy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "body.sh"), []byte(poolBody), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WANT", strconv.Itoa(want))
	loops(t, jobs, 1, dir, func(int) []string {
		return []string{"run", "--timeout", "2m", "--path", path, "--resources", strings.Join(members, ","), "--take", strconv.Itoa(take)}
	}, func(int) string {
		return fmt.Sprintf("set -- %.3f; %s", 0.05+0.25*rand.Float64(), poolJob)
	})
	b, err := os.ReadFile(filepath.Join(dir, "held"))
	if err != nil {
		t.Fatal(err)
	}
	held = strings.Fields(string(b))
	for _, n := range numbers(t, filepath.Join(dir, "counts")) {
		most = max(most, n)
	}
	return held, most
}

// checkHeld checks that each job's ZKLOCK_RESOURCES names take distinct
// members of the pool, sorted, and that they are the locks it held.
func checkHeld(t *testing.T, path string, members []string, take int, held []string) {
	t.Helper()
	for _, h := range held {
		res, paths, _ := strings.Cut(h, "|")
		got := strings.Split(res, ",")
		var want []string
		for _, m := range got {
			if !slices.Contains(members, m) {
				t.Errorf("ZKLOCK_RESOURCES=%s names %q, not a member of %v", res, m, members)
			}
			want = append(want, path+"/"+m)
		}
		if len(got) != take || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != take {
			t.Errorf("ZKLOCK_RESOURCES=%s: want %d distinct members, sorted", res, take)
		}
		if strings.Join(want, ",") != paths {
			t.Errorf("ZKLOCK_RESOURCES=%s but ZKLOCK_PATHS=%s", res, paths)
		}
	}
}

// TestPoolMembers: 12 jobs of random lengths share 3 members. No member
// has two holders (a flock detector per member), all three are busy at
// once at some point, each job is told which member it held, and nothing
// is left behind.
func TestPoolMembers(t *testing.T) {
	path := lockPath(t)
	members := []string{"env-a", "env-b", "env-c"}
	held, most := runPool(t, path, members, 1, 12, 3)
	if len(held) != 12 {
		t.Fatalf("%d jobs ran, want 12", len(held))
	}
	checkHeld(t, path, members, 1, held)
	if most != 3 {
		t.Fatalf("at most %d members busy at once, want 3", most)
	}
	assertGone(t, rawZK(t), path)
}

// TestPoolTakeTwo: jobs that each take 2 of 3 members never hold more
// than 3 in all, so they run one at a time, and none deadlocks holding
// part of a set.
func TestPoolTakeTwo(t *testing.T) {
	path := lockPath(t)
	members := []string{"env-a", "env-b", "env-c"}
	held, most := runPool(t, path, members, 2, 6, 2)
	if len(held) != 6 {
		t.Fatalf("%d jobs ran, want 6", len(held))
	}
	checkHeld(t, path, members, 2, held)
	if most > 3 {
		t.Fatalf("%d members busy at once, want at most 3", most)
	}
	assertGone(t, rawZK(t), path)
}

// TestPoolKilledHolder: a pool holder whose zklock is SIGKILLed frees its
// member once its session expires, and the next job gets it; the flock
// detector proves the first command's tree was gone by then.
func TestPoolKilledHolder(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	holder := zklock(t, append([]string{"--session-timeout", "2s", "run", "--path", path, "--resources", "only", "--"},
		guarded(dir, treeScript)...)...)
	holder.Env = append(holder.Env, "D="+dir)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	waiter := zklock(t, append([]string{"run", "--path", path, "--resources", "only", "--"},
		guarded(dir, `echo "$ZKLOCK_RESOURCES" > "$D/waiter"`)...)...)
	waiter.Env = append(waiter.Env, "D="+dir)
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer waiter.Process.Kill()
	conn := rawZK(t)
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path+"/_queue") == 1 })
	killed := time.Now()
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	if code := zktest.ExitCodeT(t, waiter.Wait()); code != 0 {
		t.Fatalf("waiter exit %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "waiter")); string(b) != "only\n" {
		t.Fatalf("the waiter ran with ZKLOCK_RESOURCES=%q", b)
	}
	t.Logf("next holder ran %s after SIGKILL (session timeout 2s)", time.Since(killed).Round(time.Millisecond))
	assertGone(t, conn, path)
}

// TestPoolHerdFree: with a member held and five jobs waiting for it, no
// node is watched by more than its owner and one waiter (wchp), and the
// holder's node by no waiter at all: the first in the pool's queue waits
// on the member's child list, the others each on the job ahead of them,
// so a release wakes one job.
func TestPoolHerdFree(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	addr := server(t).Addrs()[0]
	startHolderArgs(t, []string{"run", "--path", path, "--resources", "only"})
	const waiters = 5
	for range waiters {
		w := zklock(t, "run", "--path", path, "--resources", "only", "--", "true")
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			w.Process.Signal(syscall.SIGTERM)
			w.Wait()
		})
	}
	queue := path + "/_queue"
	zktest.Eventually(t, 20*time.Second, "the waiters to queue", func() bool { return queueLen(conn, queue) == waiters })
	var watched map[string][]int64
	zktest.Eventually(t, 20*time.Second, "each waiter but the first to watch the one ahead", func() bool {
		w, err := zktest.Wchp(t.Context(), addr)
		if err != nil {
			t.Fatal(err)
		}
		watched = w
		n := 0
		for p := range w {
			if strings.HasPrefix(p, queue+"/") {
				n++
			}
		}
		return n >= waiters-1
	})
	for p, sessions := range watched {
		switch {
		case strings.HasPrefix(p, path+"/only/") && len(sessions) > 1:
			t.Errorf("the holder's node %s is watched by %d sessions, want only its own", p, len(sessions))
		case strings.HasPrefix(p, path+"/") && len(sessions) > 2:
			t.Errorf("%s is watched by %d sessions, want at most its owner and one waiter", p, len(sessions))
		}
	}
}

// TestPoolMetrics: a pool run's --metrics-file says which members it
// held, each with its own last-hold series labelled resource, in a file
// promtool accepts.
func TestPoolMetrics(t *testing.T) {
	path := lockPath(t)
	file := filepath.Join(t.TempDir(), "zklock.prom")
	if code, _, errs := runZklock(t, nil, "run", "--path", path, "--resources", "env-b,env-a", "--take", "2",
		"--metrics-file", file, "--", "true"); code != 0 {
		t.Fatalf("pool run: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"env-a", "env-b"} {
		want := fmt.Sprintf(`zklock_last_hold_seconds{path=%q,resource=%q} `, path, m)
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in the metrics file:\n%s", want, b)
		}
	}
	promtool(t, file)
	assertGone(t, rawZK(t), path)
}
