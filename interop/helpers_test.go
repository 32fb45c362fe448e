package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/peers"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// lockPath gives the test a lock path of its own on the shared server,
// which it starts if need be (and under -short, skips the test).
func lockPath(t *testing.T) string {
	t.Helper()
	server(t)
	return zktest.TestPath(t, root)
}

// runnerArgv is the command line of a peer runner ("curator" or "kazoo").
// A missing prerequisite fails the test: these tests never skip.
func runnerArgv(t *testing.T, runner string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv, err := peers.Argv(ctx, runner)
	if err != nil {
		t.Fatal(err)
	}
	return argv
}

func zklockBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("zklock")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// csScript is every contender's command: a critical section with an
// overlap detector, run as `sh cs.sh MODE HOLD [WANT WAITMS STRICT]`.
//
// The detector is flock(1) on $D/detector: exclusive for MODE exclusive,
// shared for MODE shared, never waiting. The kernel grants it only if no
// conflicting holder is inside, so an exclusive holder that overlaps any
// other holder, or a shared one that overlaps an exclusive one, records
// itself in $D/overlaps and exits 99.
//
// Inside, the contender adds itself to the directory $D/in and appends the
// names in $D/in to $D/seen, both under the lock $D/count.lock: each line
// of $D/seen is a set of contenders that were inside at one instant, so its
// length is an exact observed concurrency.
//
// With GATE set, it then waits for the file $D/go, so the test can let the
// whole queue form before anyone leaves. With WANT, it waits up to WAITMS
// until WANT contenders are (or have been) inside at once: the first to see
// it records that moment in $D/seen and creates $D/met, which releases the
// others. With STRICT=1 not getting there is a failure (exit 3). Then it
// stays HOLD seconds, leaves $D/in, and appends its name to $D/done.
// Events go to $D/log, which a failing test prints.
const csScript = `mode=$1 hold=$2 want=${3:-0} waitms=${4:-0} strict=${5:-0}
exec 8>>"$D/detector"
if [ "$mode" = shared ]; then fl=-s; else fl=-x; fi
if ! flock -n $fl 8; then echo "$WHO" >> "$D/overlaps"; exit 99; fi
echo "$WHO" >> "$D/order"
echo "$(date +%T.%N) $WHO in" >> "$D/log"
id="$WHO.$$"
flock "$D/count.lock" sh -c 'touch "$D/in/$1"; echo $(ls "$D/in") >> "$D/seen"' sh "$id"
if [ -n "$GATE" ]; then
  while [ ! -e "$D/go" ] && [ -d "$D/in" ]; do sleep 0.01; done
fi
if [ "$want" -gt 0 ]; then
  end=$(( $(date +%s%N) + waitms * 1000000 ))
  until [ -e "$D/met" ] || flock "$D/count.lock" sh -c '[ $(ls "$D/in" | wc -l) -ge $1 ] && echo $(ls "$D/in") >> "$D/seen" && touch "$D/met"' sh "$want"; do
    if [ "$(date +%s%N)" -gt "$end" ]; then
      if [ "$strict" = 1 ]; then
        flock "$D/count.lock" rm -f "$D/in/$id"
        echo "$(date +%T.%N) $WHO gave up waiting for $want inside" >> "$D/log"
        exit 3
      fi
      break
    fi
    sleep 0.01
  done
fi
sleep "$hold"
flock "$D/count.lock" rm -f "$D/in/$id"
echo "$(date +%T.%N) $WHO out" >> "$D/log"
echo "$WHO" >> "$D/done"
`

// arena is one lock path with contenders of several clients around it.
type arena struct {
	t    *testing.T
	dir  string
	path string
	conn *zk.Conn
	gate bool
	ctx  context.Context

	wg    sync.WaitGroup
	mu    sync.Mutex
	fails []string
	procs int // contenders in the queue at once (one per loop or runner)
}

// newArena prepares a directory with the critical-section script. With
// gate, contenders wait inside for open.
func newArena(t *testing.T, gate bool) *arena {
	t.Helper()
	a := &arena{t: t, dir: t.TempDir(), path: lockPath(t), gate: gate}
	if err := os.WriteFile(filepath.Join(a.dir, "cs.sh"), []byte(csScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(a.dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	a.conn = zktest.DialT(t, server(t).Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	a.ctx = ctx
	// After a failure, let anyone at the gate go, stop the rest, and wait
	// for them before the directory goes.
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(a.dir, "go"), nil, 0o644)
		cancel()
		a.wg.Wait()
	})
	return a
}

func (a *arena) env(who string) []string {
	env := append(os.Environ(), "ZKLOCK_SERVERS="+server(a.t).ConnectString(), "NO_COLOR=1", "D="+a.dir, "WHO="+who)
	if a.gate {
		env = append(env, "GATE=1")
	}
	return env
}

// logf adds a line to the arena's log, which a failing test prints.
func (a *arena) logf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(a.dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", time.Now().Format("15:04:05.000000000"), fmt.Sprintf(format, args...))
}

func (a *arena) fail(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fails = append(a.fails, fmt.Sprintf(format, args...))
}

// run runs one process to completion and records a failure for an exit
// status other than 0.
func (a *arena) run(who string, argv []string) {
	a.logf("%s start", who)
	defer a.logf("%s exited", who)
	c := exec.CommandContext(a.ctx, argv[0], argv[1:]...)
	c.Env = a.env(who)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	code, err := zktest.ExitCode(c.Run())
	switch {
	case err != nil:
		a.fail("%s: %v", who, err)
	case code == 99:
		a.fail("%s: OVERLAP: it entered its critical section while another holder was inside", who)
	case code != 0:
		a.fail("%s: exit %d: %s", who, code, out.String())
	}
}

func (a *arena) cs(args []string) []string {
	return append([]string{"sh", filepath.Join(a.dir, "cs.sh")}, args...)
}

// zklock starts a loop that runs `zklock run FLAGS --path P -- sh cs.sh CS`
// runs times, one after the other.
func (a *arena) zklock(who string, runs int, flags []string, cs ...string) {
	bin := zklockBin(a.t)
	argv := append([]string{bin, "run"}, flags...)
	argv = append(append(argv, "--path", a.path, "--"), a.cs(cs)...)
	a.procs++
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for r := 0; r < runs && a.ctx.Err() == nil; r++ {
			a.run(who, argv)
		}
	}()
}

// peer starts a runner ("curator" or "kazoo") that runs cs.sh o.Repeat times.
func (a *arena) peer(who, runner string, o peers.Options, cs ...string) {
	o.Servers, o.Path = server(a.t).ConnectString(), a.path
	argv := append(runnerArgv(a.t, runner), o.Args(a.cs(cs)...)...)
	a.procs++
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.run(who, argv)
	}()
}

// queued is how many contenders have a node in the lock path's queue.
func (a *arena) queued() int {
	ch, _, err := a.conn.Children(a.path)
	if err != nil {
		return 0
	}
	return len(ch)
}

// open waits until joined says the whole queue has formed, then lets the
// contenders waiting at the gate go on. Nobody can finish before that, so
// any contender that exits earlier has failed.
func (a *arena) open(joined func() bool) {
	a.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !joined() {
		a.mu.Lock()
		fails := append([]string(nil), a.fails...)
		a.mu.Unlock()
		if len(fails) > 0 || time.Now().After(deadline) {
			for _, f := range fails {
				a.t.Error(f)
			}
			a.t.Fatalf("not all %d contenders queued at %s (%d did)", a.procs, a.path, a.queued())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(a.dir, "go"), nil, 0o644); err != nil {
		a.t.Fatal(err)
	}
}

// wait waits for every contender and reports their failures.
func (a *arena) wait() {
	a.t.Helper()
	a.wg.Wait()
	for _, f := range a.fails {
		a.t.Error(f)
	}
	if b, err := os.ReadFile(filepath.Join(a.dir, "overlaps")); err == nil {
		a.t.Fatalf("OVERLAPS: these contenders found another holder inside: %s", strings.Fields(string(b)))
	}
	if a.t.Failed() {
		a.t.Logf("what happened:\n%s", strings.Join(a.lines("log"), "\n"))
		a.t.FailNow()
	}
}

// lines returns the lines of a file in the arena's directory.
func (a *arena) lines(name string) []string {
	b, err := os.ReadFile(filepath.Join(a.dir, name))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// clientOf is the client of a contender tag ("curator-r1" -> "curator").
func clientOf(who string) string {
	c, _, _ := strings.Cut(who, "-")
	return c
}

// maxInside is the largest set of contenders seen inside at once, as tags
// (the entries of $D/in are "<tag>.<pid>").
func (a *arena) maxInside() []string {
	var best []string
	for _, l := range a.lines("seen") {
		f := strings.Fields(l)
		if len(f) > len(best) {
			best = f
		}
	}
	for i, e := range best {
		best[i] = e[:strings.LastIndexByte(e, '.')]
	}
	return best
}

// mixedInside reports a moment when contenders of both clients were
// inside together, or nil.
func (a *arena) mixedInside(c1, c2 string) []string {
	for _, l := range a.lines("seen") {
		var has1, has2 bool
		for _, e := range strings.Fields(l) {
			has1 = has1 || clientOf(e) == c1
			has2 = has2 || clientOf(e) == c2
		}
		if has1 && has2 {
			return strings.Fields(l)
		}
	}
	return nil
}

// checkDone checks that every critical section completed: want of them,
// from each client in clients.
func (a *arena) checkDone(want int, clients ...string) {
	a.t.Helper()
	done := a.lines("done")
	if len(done) != want {
		a.t.Fatalf("%d critical sections completed, want %d: %v", len(done), want, done)
	}
	seen := map[string]int{}
	for _, w := range done {
		seen[clientOf(w)]++
	}
	for _, c := range clients {
		if seen[c] == 0 {
			a.t.Errorf("no %s client completed a critical section: %v", c, done)
		}
	}
}

// handoffs counts the times the lock passed from one client to another, in
// the order holders entered.
func (a *arena) handoffs() int {
	n := 0
	order := a.lines("order")
	for i := 1; i < len(order); i++ {
		if clientOf(order[i]) != clientOf(order[i-1]) {
			n++
		}
	}
	return n
}
