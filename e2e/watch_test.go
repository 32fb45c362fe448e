package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// curatorContender is the name of a contender node as Curator makes it,
// but for the sequence number the server appends.
const curatorContender = "_c_11111111-2222-4333-8444-555555555555-lock-"

// watchLine is one line a watch printed, and when it was read.
type watchLine struct {
	text string
	at   time.Time
}

// watchOutput runs zklock with args (a --watch without a terminal) and
// hands each line of its stdout over as it comes. stop sends SIGTERM and
// returns the exit code and stderr.
func watchOutput(t *testing.T, args ...string) (lines <-chan watchLine, stop func() (int, string)) {
	t.Helper()
	lines, _, stop = watchVia(t, "", args...)
	return lines, stop
}

// watchVia is watchOutput through servers (the shared server if empty),
// with its stderr to read while it runs.
func watchVia(t *testing.T, servers string, args ...string) (lines <-chan watchLine, stderr *syncBuffer, stop func() (int, string)) {
	t.Helper()
	c := zklock(t, args...)
	if servers != "" {
		c.Env = append(c.Env, "ZKLOCK_SERVERS="+servers)
	}
	errb := &syncBuffer{}
	c.Stderr = errb
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan watchLine, 100)
	read := make(chan struct{})
	// The reader ends when zklock closes its stdout, at its exit, which
	// stop (or the cleanup) waits for.
	go func() {
		defer close(read)
		defer close(ch)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			ch <- watchLine{sc.Text(), time.Now()}
		}
	}()
	code, stopped := -1, false
	stop = func() (int, string) {
		if !stopped {
			stopped = true
			c.Process.Signal(syscall.SIGTERM)
			<-read
			err := c.Wait()
			code = exitCodeOf(t, err)
		}
		return code, errb.String()
	}
	t.Cleanup(func() { stop() })
	return ch, errb, stop
}

func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	return zktest.ExitCodeT(t, err)
}

// listSnapshot is list --json's shape, as much as the tests read of it.
type listSnapshot struct {
	Locks []struct {
		Path    string       `json:"path"`
		Entries []watchEntry `json:"entries"`
	} `json:"locks"`
	Skipped []string `json:"skipped"`
}

type watchEntry struct {
	State string `json:"state"`
	PID   int    `json:"pid"`
	Node  string `json:"node"`
}

func (s listSnapshot) entries() []watchEntry {
	var es []watchEntry
	for _, l := range s.Locks {
		es = append(es, l.Entries...)
	}
	return es
}

// nextLine waits for the next line and decodes it into v; a line that is
// no JSON of v's shape, or the same as the one before, fails the test.
func nextLine(t *testing.T, lines <-chan watchLine, prev *string, what string, v any) watchLine {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("waiting for %s: the watch ended", what)
		}
		if err := json.Unmarshal([]byte(l.text), v); err != nil {
			t.Fatalf("waiting for %s: %q is not one JSON snapshot: %v", what, l.text, err)
		}
		if l.text == *prev {
			t.Fatalf("waiting for %s: the same snapshot twice: %s", what, l.text)
		}
		*prev = l.text
		return l
	case <-time.After(20 * time.Second):
		t.Fatalf("no line with %s", what)
	}
	return watchLine{}
}

// states are the entries' states, in queue order.
func states(es []watchEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.State)
	}
	return out
}

// TestWatchLines: without a terminal, list --watch and holders --watch
// --json print one JSON line per change, in --json's shape: a holder
// joins and takes the lock, a waiter joins, the holder is revoked and
// leaves, the waiter takes the lock and leaves. A change is printed within
// 200 ms of the request that makes it. SIGTERM ends the watch, exit 0.
func TestWatchLines(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	list, stopList := watchOutput(t, "list", "--watch", "--path", path)
	holders, stopHolders := watchOutput(t, "holders", "--watch", "--json", "--path", path)
	var prevList, prevHolders string
	var ls listSnapshot
	var hs []watchEntry
	// expect reads list's next line, and holders' if wantHolders is not
	// nil (a change that holders shows too).
	var lastList, lastHolders watchLine
	// waitPace returns once the pace has passed since the last line
	// either watch printed.
	waitPace := func() {
		last := lastList.at
		if lastHolders.at.After(last) {
			last = lastHolders.at
		}
		time.Sleep(time.Until(last.Add(jsonPace)))
	}
	expect := func(what string, wantList []string, wantHolders func([]watchEntry) bool) (l, h watchLine) {
		t.Helper()
		defer func() { lastList, lastHolders = l, h }()
		ls, hs = listSnapshot{}, nil
		l = nextLine(t, list, &prevList, what, &ls)
		if got := states(ls.entries()); !equalStrings(got, wantList) {
			t.Fatalf("%s: list shows %v, want %v (%s)", what, got, wantList, l.text)
		}
		if wantHolders == nil {
			return l, h
		}
		h = nextLine(t, holders, &prevHolders, what, &hs)
		if !wantHolders(hs) {
			t.Fatalf("%s: holders shows %s", what, h.text)
		}
		return l, h
	}
	free := func(hs []watchEntry) bool { return len(hs) == 0 }
	heldBy := func(pid int) func([]watchEntry) bool {
		return func(hs []watchEntry) bool { return len(hs) == 1 && hs[0].PID == pid }
	}
	held := func(hs []watchEntry) bool { return len(hs) == 1 }
	expect("a path that does not exist: empty", nil, free)

	h1 := startHolder(t, path)
	expect("a holder joining", []string{"holding"}, heldBy(h1.Process.Pid))

	waiter := zklock(t, "run", "--path", path, "--", "sh", "-c", "while :; do sleep 0.05; done")
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		waiter.Process.Signal(syscall.SIGTERM)
		waiter.Wait()
	})
	expect("a waiter joining", []string{"holding", "waiting"}, nil)

	if r := runWithin(t, 30*time.Second, zklock(t, "revoke", "--path", path, "--wait", "--timeout", "20s")); r.code != 0 {
		t.Fatalf("revoke: exit %d: %s", r.code, r.stderr)
	}
	expect("the holder revoked, the waiter taking the lock", []string{"holding"}, heldBy(waiter.Process.Pid))
	if code := exitCodeOf(t, h1.Wait()); code != 76 {
		t.Errorf("the revoked holder exited %d, want 76", code)
	}

	waiter.Process.Signal(syscall.SIGTERM)
	expect("the last holder leaving", nil, free)

	// The bound, measured from the request that makes the change: a
	// contender joins and leaves. Each change is made once the pace since
	// the line before has passed: sooner, it waits for that (see
	// TestWatchLinesPaced).
	for range 3 {
		waitPace()
		t0 := time.Now()
		node := foreignNode(t, conn, path+"/"+curatorContender, nil)
		expect("a contender joining", []string{"holding"}, held)
		l, h := lastList, lastHolders
		checkBound(t, "a contender joining", t0, l, h)
		waitPace()
		t0 = time.Now()
		if err := conn.Delete(node, -1); err != nil {
			t.Fatal(err)
		}
		expect("a contender leaving", nil, free)
		l, h = lastList, lastHolders
		checkBound(t, "a contender leaving", t0, l, h)
	}

	for name, stop := range map[string]func() (int, string){"list": stopList, "holders": stopHolders} {
		if code, stderr := stop(); code != 0 || stderr != "" {
			t.Errorf("%s --watch after SIGTERM: exit %d, stderr %q; want 0 and nothing", name, code, stderr)
		}
	}
}

// checkBound fails the test if a line came more than 200 ms after t0.
func checkBound(t *testing.T, what string, t0 time.Time, lines ...watchLine) {
	t.Helper()
	for _, l := range lines {
		if l.at.IsZero() {
			continue
		}
		took := l.at.Sub(t0)
		t.Logf("%s: printed after %s", what, took)
		if took > 200*time.Millisecond {
			t.Errorf("%s: printed after %s, more than 200ms", what, took)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWatchLinesDisconnected: without a terminal, a lost connection is a
// warning on stderr that says since when, and its return another; the
// watch goes on, and the next change is printed.
func TestWatchLinesDisconnected(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	lines, stderr, stop := watchVia(t, proxy.Addr(), "list", "--watch", "--path", path)
	var prev string
	var ls listSnapshot
	nextLine(t, lines, &prev, "the first snapshot", &ls)

	proxy.Cut()
	lost := regexp.MustCompile(`^zklock: warning: disconnected from ZooKeeper since \d\d:\d\d:\d\d, retrying\n$`)
	zktest.Eventually(t, 10*time.Second, "a warning that the connection is lost", func() bool { return lost.MatchString(stderr.String()) })
	proxy.Heal()
	back := regexp.MustCompile(`\nzklock: warning: connected to ZooKeeper again, after \d[.\d]*m?s\n$`)
	zktest.Eventually(t, 20*time.Second, "a warning that it is back", func() bool { return back.MatchString(stderr.String()) })

	contenderShownThenStop(t, conn, path, lines, &prev, stop, "after the connection came back")
}

// TestWatchLinesSessionExpired: a loss longer than the session timeout
// costs the session and its watches on the server; once a server answers
// again a new session sets them again, and the next change is printed.
func TestWatchLinesSessionExpired(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	addr := server(t).Addrs()[0]
	proxy := zktest.NewProxyT(t, addr)
	lines, stderr, stop := watchVia(t, proxy.Addr(), "--session-timeout", "2s", "list", "--watch", "--path", path)
	var prev string
	var ls listSnapshot
	nextLine(t, lines, &prev, "the first snapshot", &ls)
	watched := func() int {
		w, err := zktest.Wchp(t.Context(), addr)
		if err != nil {
			t.Fatal(err)
		}
		return len(w[path])
	}
	zktest.Eventually(t, 10*time.Second, "the watch on the path", func() bool { return watched() == 1 })

	proxy.Cut()
	zktest.Eventually(t, 10*time.Second, "a warning that the connection is lost", func() bool {
		return strings.Contains(stderr.String(), "disconnected from ZooKeeper since")
	})
	zktest.Eventually(t, 20*time.Second, "the session and its watch to expire on the server", func() bool { return watched() == 0 })
	proxy.Heal()
	zktest.Eventually(t, 20*time.Second, "the watch set again on a new session", func() bool { return watched() == 1 })

	contenderShownThenStop(t, conn, path, lines, &prev, stop, "on the new session")
}

// TestWatchReaderGone: a watch whose reader went away (`| head -1`) ends
// at the next change, quietly, with exit 0.
func TestWatchReaderGone(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := zklock(t, "holders", "--watch", "--json", "--path", path)
	var errb syncBuffer
	c.Stdout, c.Stderr = w, &errb
	z := start(t, c, os.Kill)
	w.Close()
	if first, err := bufio.NewReader(r).ReadString('\n'); err != nil || first != "[]\n" {
		t.Fatalf("first line %q, %v; want []", first, err)
	}
	r.Close()
	foreignNode(t, conn, path+"/"+curatorContender, nil)
	select {
	case <-z.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("still watching 10s after a change its reader was gone for")
	}
	if code := exitCodeOf(t, z.err); code != 0 || errb.String() != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errb.String())
	}
}

// TestListReaderGone: a listing whose reader went away before it was
// written (`list --json | head -c 300` on a long listing) ends quietly
// with exit 0, as a watch does, not with a broken pipe and 69.
func TestListReaderGone(t *testing.T) {
	path := lockPath(t)
	foreignNode(t, rawZK(t), path+"/"+curatorContender, nil)
	for _, args := range [][]string{{"list", "--json"}, {"list"}, {"holders", "--path", path}} {
		if args[0] == "list" {
			args = append(args, "--path", path)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		c := zklock(t, args...)
		var errb syncBuffer
		c.Stdout, c.Stderr = w, &errb
		err = c.Run()
		w.Close()
		if code := exitCodeOf(t, err); code != 0 || errb.String() != "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", args, code, errb.String())
		}
	}
}

// contenderShownThenStop adds a contender at path, checks that the watch
// prints it as the one holder (when says at which point of the test),
// then ends the watch with SIGTERM, which must exit 0.
func contenderShownThenStop(t *testing.T, conn *zk.Conn, path string, lines <-chan watchLine, prev *string, stop func() (int, string), when string) {
	t.Helper()
	foreignNode(t, conn, path+"/"+curatorContender, nil)
	var ls listSnapshot
	nextLine(t, lines, prev, "a contender, "+when, &ls)
	if got := states(ls.entries()); !equalStrings(got, []string{"holding"}) {
		t.Errorf("%s: %v, want one holder", when, got)
	}
	if code, _ := stop(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// jsonPace is the least time between two lines of a watch in JSON, as
// docs/guide/list.md says: at most four lines a second.
const jsonPace = 250 * time.Millisecond

// TestWatchLinesPaced: a queue that churns prints at most a line per pace,
// each with the whole queue. First a contender joins each time a line is
// read, which without the pace prints a line per change as fast as the
// server answers; then a hundred join and leave as fast as one client can
// make them, and the last change is shown, not lost in the coalescing.
func TestWatchLinesPaced(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	contender := path + "/" + curatorContender
	foreignNode(t, conn, contender, nil) // the holder
	lines, stop := watchOutput(t, "list", "--watch", "--json", "--path", path)
	var prev string
	var ls listSnapshot
	nextLine(t, lines, &prev, "the holder", &ls)
	t0 := time.Now()
	var printed []watchLine
	for i := range 12 {
		foreignNode(t, conn, contender, nil)
		ls = listSnapshot{}
		printed = append(printed, nextLine(t, lines, &prev, fmt.Sprintf("waiter %d", i+1), &ls))
	}
	for range 100 {
		n := foreignNode(t, conn, contender, nil)
		if err := conn.Delete(n, -1); err != nil {
			t.Fatal(err)
		}
	}
	last := foreignNode(t, conn, contender, nil)
	for {
		ls = listSnapshot{}
		printed = append(printed, nextLine(t, lines, &prev, "the last waiter", &ls))
		if es := ls.entries(); len(es) == 14 && strings.HasSuffix(last, es[13].Node) {
			break
		}
	}
	// A line comes at once after a quiet pace, then at most one a pace:
	// up to the last line read, no more than this many.
	span := printed[len(printed)-1].at.Sub(t0)
	bound := int(span/jsonPace) + 1
	t.Logf("%d lines in %s (at most %d)", len(printed), span.Round(time.Millisecond), bound)
	if len(printed) > bound {
		t.Errorf("%d lines in %s, more than one per %s (%d)", len(printed), span, jsonPace, bound)
	}
	if code, stderr := stop(); code != 0 || stderr != "" {
		t.Errorf("after SIGTERM: exit %d, stderr %q", code, stderr)
	}
}
