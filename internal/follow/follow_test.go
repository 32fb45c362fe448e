package follow

import (
	"context"
	"errors"
	"path"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/internal/tree"
	"github.com/zklock/zklock/zkconn"
)

func TestMain(m *testing.M) { shared.Main(m) }

// showBound is how soon a change must be shown on loopback.
const showBound = 200 * time.Millisecond

// contender is the name prefix of a Curator-style exclusive contender; the
// server appends the sequence number.
const contender = "_c_11111111-2222-4333-8444-555555555555-lock-"

var openACL = zk.WorldACL(zk.PermAll)

// shown is a snapshot as Show got it.
type shown struct {
	Snapshot
	at time.Time
}

// watching is a Run under test.
type watching struct {
	t     *testing.T
	shown chan shown
	done  chan error
	stop  func() error
}

// start runs Run with o until the test ends (or stop), collecting what it
// shows.
func start(t *testing.T, servers string, sessionTimeout time.Duration, o Options) *watching {
	t.Helper()
	cs, err := zkconn.ParseConnString(servers)
	if err != nil {
		t.Fatal(err)
	}
	o.Conn = zkconn.Options{ConnString: cs, SessionTimeout: sessionTimeout, ConnectTimeout: 10 * time.Second}
	w := &watching{t: t, shown: make(chan shown, 10000), done: make(chan error, 1)}
	o.Show = func(s Snapshot) error {
		w.shown <- shown{s, time.Now()}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { w.done <- Run(ctx, o) }()
	var once sync.Once
	var err2 error
	w.stop = func() error {
		once.Do(func() {
			cancel()
			err2 = <-w.done
		})
		return err2
	}
	t.Cleanup(func() { w.stop() })
	return w
}

// next waits for a snapshot that satisfies cond, skipping the others.
func (w *watching) next(what string, within time.Duration, cond func(Snapshot) bool) shown {
	w.t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case s := <-w.shown:
			if cond(s.Snapshot) {
				return s
			}
		case err := <-w.done:
			w.done <- err // for stop, which the test's cleanup calls
			w.t.Fatalf("waiting for %s: Run returned %v", what, err)
		case <-timer.C:
			w.t.Fatalf("no snapshot with %s within %s", what, within)
		}
	}
}

// entries counts the contenders a snapshot shows, and the holders.
func entries(s Snapshot) (all, holding int) {
	for _, q := range s.Tree.Queues {
		for _, e := range q.Entries {
			all++
			if e.Holding {
				holding++
			}
		}
	}
	for _, e := range s.Holders {
		all++
		if e.Holding {
			holding++
		}
	}
	return all, holding
}

func queue(n, holding int) func(Snapshot) bool {
	return func(s Snapshot) bool {
		a, h := entries(s)
		return a == n && h == holding
	}
}

// mkdirs creates p and its parents as containers, as zklock does.
func mkdirs(t *testing.T, conn *zk.Conn, p string) {
	t.Helper()
	if p == "/" {
		return
	}
	// The test server removes an empty container that once had children
	// within 100ms: a parent shared with other tests can go between its
	// creation and its child's, and is then made again.
	for attempt := 0; ; attempt++ {
		mkdirs(t, conn, path.Dir(p))
		_, err := conn.CreateContainer(p, nil, zk.FlagContainer, openACL)
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			return
		}
		if !errors.Is(err, zk.ErrNoNode) || attempt == 10 {
			t.Fatal(err)
		}
	}
}

// TestEachChangeShown: list and holders show the queue again at each change
// (a contender joins, takes the lock, leaves), each within showBound of
// the change, measured from just before the request that makes it. A path
// that does not exist yet, or no longer, is an empty queue, and the watch
// goes on: the path's creation is seen too.
func TestEachChangeShown(t *testing.T) {
	conn := shared.Raw(t)
	root := shared.Dir(t)
	lockPath := root + "/job"
	servers := shared.Server(t).ConnectString()
	list := start(t, servers, 4*time.Second, Options{Path: root})
	holders := start(t, servers, 4*time.Second, Options{Path: lockPath, HoldersOnly: true})
	for _, w := range []*watching{list, holders} {
		w.next("an empty queue at a path that does not exist", 10*time.Second, queue(0, 0))
	}
	mkdirs(t, conn, lockPath)

	var worst time.Duration
	// peer is a plain client's own child watch on the lock path, set
	// before each change: the time ZooKeeper and this machine take to
	// tell any client of the change. On a busy machine that time grows,
	// and the bound grows with it: what is proven is that a watch shows
	// the change as soon as it is told, not after a poll.
	peer := func() func() time.Duration {
		t.Helper()
		_, _, ch, err := conn.ChildrenW(lockPath)
		if errors.Is(err, zk.ErrNoNode) {
			// Not there yet: its creation is the first news.
			_, _, ch, err = conn.ExistsW(lockPath)
		}
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		return func() time.Duration {
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatal("a plain client's child watch never fired")
			}
			return time.Since(t0)
		}
	}
	bound := func(told time.Duration) time.Duration { return showBound + 2*told }
	change := func(what string, listWant, holdersWant func(Snapshot) bool, do func() error) {
		t.Helper()
		told := peer()
		t0 := time.Now()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		limit := bound(told())
		for _, w := range []struct {
			name string
			w    *watching
			want func(Snapshot) bool
		}{{"list", list, listWant}, {"holders", holders, holdersWant}} {
			s := w.w.next(what, 5*time.Second, w.want)
			took := s.at.Sub(t0)
			t.Logf("%s: %s shown after %s (bound %s)", w.name, what, took, limit)
			worst = max(worst, took)
			if took > limit {
				t.Errorf("%s: %s shown after %s, more than %s", w.name, what, took, limit)
			}
		}
	}
	var first, second string
	create := func(p *string) func() error {
		return func() (err error) {
			*p, err = conn.Create(lockPath+"/"+contender, []byte("client"), zk.FlagEphemeralSequential, openACL)
			return err
		}
	}
	change("a contender that takes the lock", queue(1, 1), queue(1, 1), create(&first))
	// A waiter joins: holders shows the same holder, so it shows nothing
	// new; list shows the waiter.
	told := peer()
	t0 := time.Now()
	if err := create(&second)(); err != nil {
		t.Fatal(err)
	}
	limit := bound(told())
	s := list.next("a waiter", 5*time.Second, queue(2, 1))
	if took := s.at.Sub(t0); took > limit {
		t.Errorf("list: a waiter shown after %s, more than %s", took, limit)
	}
	change("the holder leaving, the waiter taking the lock", queue(1, 1), func(s Snapshot) bool {
		return len(s.Holders) == 1 && zkconn.Join(lockPath, s.Holders[0].Name) == second
	}, func() error { return conn.Delete(first, -1) })
	change("the last contender leaving", queue(0, 0), queue(0, 0), func() error { return conn.Delete(second, -1) })

	// The lock path disappears: nothing new to show, no error; it comes
	// back, and its contender is shown.
	if err := conn.Delete(lockPath, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	if err := conn.Delete(root, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	change("the path made again, with a contender", queue(1, 1), queue(1, 1), func() error {
		mkdirs(t, conn, lockPath)
		return create(&first)()
	})
	t.Logf("slowest change shown after %s", worst)
	for _, w := range []*watching{list, holders} {
		if err := w.stop(); err != nil {
			t.Errorf("Run ended with %v at its context's end, want nil", err)
		}
	}
}

// watchCounts reads the server's count of every watch (mntr) and of the
// data watches (wchs).
func watchCounts(t *testing.T, addr string) (all, data int) {
	t.Helper()
	ctx := shared.Ctx(t, 10*time.Second)
	m, err := zktest.Mntr(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	all, err = strconv.Atoi(m["zk_watch_count"])
	if err != nil {
		t.Fatal(err)
	}
	s, err := zktest.Wchs(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	return all, s.Watches
}

// TestWatchesBounded: a queue of 1,000 waiters costs a watch of list two
// child watches (the parent and the lock path) and a watch of holders
// one (the lock path), and neither any data watch: measured on the
// server, with wchs and mntr, before and after the watches start and
// after a change has made them read again.
func TestWatchesBounded(t *testing.T) {
	conn := shared.Raw(t)
	root := shared.Dir(t)
	lockPath := root + "/big"
	mkdirs(t, conn, lockPath)
	const waiters = 1000
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	nodes := make([]string, waiters)
	sem := make(chan struct{}, 64) // requests pipelined on the one session
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := conn.Create(lockPath+"/"+contender, []byte("w"+strconv.Itoa(i)), zk.FlagEphemeralSequential, openACL)
			nodes[i] = p
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	srv := shared.Server(t)
	addr := srv.Server(0).Addr()
	allBefore, dataBefore := watchCounts(t, addr)

	list := start(t, srv.ConnectString(), 4*time.Second, Options{Path: root})
	holders := start(t, srv.ConnectString(), 4*time.Second, Options{Path: lockPath, HoldersOnly: true})
	list.next("the whole queue", 30*time.Second, queue(waiters, 1))
	holders.next("its holder", 30*time.Second, queue(1, 1))
	check := func(when string) {
		t.Helper()
		all, data := watchCounts(t, addr)
		t.Logf("%s: %d watches more on the server, %d of them data watches", when, all-allBefore, data-dataBefore)
		if all-allBefore != 3 || data != dataBefore {
			t.Errorf("%s: the watches added %d watches, %d of them data watches; want 3 child watches (list: parent and lock path; holders: lock path) and no data watch",
				when, all-allBefore, data-dataBefore)
		}
	}
	check("queue read")

	// The holder (the node first in line) leaves: both read again, and
	// set their watches again.
	slices.Sort(nodes)
	t0 := time.Now()
	if err := conn.Delete(nodes[0], -1); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*watching{list, holders} {
		s := w.next("the next holder", 30*time.Second, func(s Snapshot) bool {
			a, h := entries(s)
			return h == 1 && (a == 1 || a == waiters-1)
		})
		t.Logf("a change to a queue of %d shown after %s", waiters, s.at.Sub(t0))
	}
	check("after a change")
}

// TestPathGoneWatched: a path that goes is shown empty, and watched for
// its existence: a data watch, which wchp names with its path.
func TestPathGoneWatched(t *testing.T) {
	conn := shared.Raw(t)
	root := shared.Dir(t)
	lockPath := root + "/job"
	srv := shared.Server(t)
	addr := srv.Server(0).Addr()
	proxy := zktest.NewProxyT(t, addr)

	const sessionTimeout = time.Second
	list := start(t, proxy.Addr(), sessionTimeout, Options{Path: root})
	list.next("an empty queue", 10*time.Second, queue(0, 0))
	contend := func() string {
		t.Helper()
		mkdirs(t, conn, lockPath)
		p, err := conn.Create(lockPath+"/"+contender, nil, zk.FlagEphemeralSequential, openACL)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	watchers := func() int {
		w, err := zktest.Wchp(shared.Ctx(t, 10*time.Second), addr)
		if err != nil {
			t.Fatal(err)
		}
		return len(w[root])
	}

	// A short loss, which keeps the session and its watches, is proven in
	// a child process (e2e's TestWatchLinesDisconnected): resuming a
	// session with watches set runs into go-zookeeper's own race between
	// its set-watches packet and its receive loop, which the race detector
	// reports in this process, and zkcli passes over only in a child (see
	// docs/testing.md).
	first := contend()
	list.next("a contender", 5*time.Second, queue(1, 1))

	// The path goes: the watch is on its existence now.
	for _, p := range []string{first, lockPath, root} {
		if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Fatal(err)
		}
	}
	list.next("the contender gone", 5*time.Second, queue(0, 0))
	zktest.Eventually(t, 10*time.Second, "a watch on the path's existence", func() bool { return watchers() == 1 })

	// A loss of the connection, short or long, is proven in a child
	// process (e2e's TestWatchLinesDisconnected and
	// TestWatchLinesSessionExpired): resuming a session, or re-arming
	// watches as a new one starts, runs into go-zookeeper's own race
	// between its set-watches packet and its receive loop, which the race
	// detector reports in this process and zkcli passes over only in a
	// child (docs/testing.md).
	if err := list.stop(); err != nil {
		t.Errorf("Run ended with %v, want nil", err)
	}
}

// lease is the name prefix of a Curator-style semaphore lease.
const lease = "_c_11111111-2222-4333-8444-555555555555-lease-"

// TestSubtreesReadAgain: a change is read again in the subtree where it
// happened, and the rest of what is shown stays: locks at two depths, a
// lock path that appears below a node already watched, one that goes,
// and a semaphore, whose leases and mutex show as one queue at its path
// (for holders, its leases are its holders).
func TestSubtreesReadAgain(t *testing.T) {
	conn := shared.Raw(t)
	root := shared.Dir(t)
	a, b, sem := root+"/a", root+"/g/b", root+"/g/sem"
	for _, p := range []string{a, b, sem + "/leases", sem + "/locks"} {
		mkdirs(t, conn, p)
	}
	create := func(p, name string) string { // all on one session
		t.Helper()
		n, err := conn.Create(p+"/"+name, nil, zk.FlagEphemeralSequential, openACL)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	create(a, contender)
	servers := shared.Server(t).ConnectString()
	list := start(t, servers, 4*time.Second, Options{Path: root})
	holders := start(t, servers, 4*time.Second, Options{Path: sem, HoldersOnly: true})
	list.next("the lock a", 10*time.Second, queue(1, 1))
	holders.next("a semaphore without leases", 10*time.Second, queue(0, 0))

	counts := func(s Snapshot) map[string]int {
		m := map[string]int{}
		for _, q := range s.Tree.Queues {
			m[q.Path] = len(q.Entries)
		}
		return m
	}
	expect := func(what string, want map[string]int) {
		t.Helper()
		s := list.next(what, 5*time.Second, func(s Snapshot) bool { return reflect.DeepEqual(counts(s), want) })
		for _, q := range s.Tree.Queues {
			if q.Path == sem && q.Recipe != recipe.RecipeSemaphore {
				t.Errorf("%s: %s shows as a %v, not a semaphore", what, sem, q.Recipe)
			}
		}
	}
	bNode := create(b, contender)
	expect("a lock that appears below a watched node", map[string]int{a: 1, b: 1})
	create(b, contender)
	expect("a waiter at b, a unchanged", map[string]int{a: 1, b: 2})
	create(sem+"/leases", lease)
	expect("a lease", map[string]int{a: 1, b: 2, sem: 1})
	holders.next("the lease holding", 5*time.Second, queue(1, 1))
	create(sem+"/leases", lease)
	expect("a second lease", map[string]int{a: 1, b: 2, sem: 2})
	holders.next("both leases holding", 5*time.Second, queue(2, 2))
	// Another session waits in the mutex (a session's own mutex node,
	// beside its lease, is not shown twice).
	if _, err := shared.Raw(t).Create(sem+"/locks/"+contender, nil, zk.FlagEphemeralSequential, openACL); err != nil {
		t.Fatal(err)
	}
	expect("one waiting in the semaphore's mutex", map[string]int{a: 1, b: 2, sem: 3})
	create(a, contender)
	expect("a second contender at a", map[string]int{a: 2, b: 2, sem: 3})
	if err := conn.Delete(bNode, -1); err != nil {
		t.Fatal(err)
	}
	expect("b's holder gone", map[string]int{a: 2, b: 1, sem: 3})
}

// TestOutermost: the subtrees read again for a set of changed nodes.
func TestOutermost(t *testing.T) {
	w := &watcher{o: Options{Path: "/locks"}}
	for _, c := range []struct {
		changed []string
		want    []string
	}{
		{[]string{"/locks/a", "/locks/a-b", "/locks/a/c"}, []string{"/locks/a", "/locks/a-b"}},
		{[]string{"/locks/s/leases", "/locks/s/locks"}, []string{"/locks/s"}},
		{[]string{"/locks/x", "/locks"}, []string{"/locks"}},
	} {
		m := map[string]bool{}
		for _, p := range c.changed {
			m[p] = true
		}
		if got := w.outermost(m); !reflect.DeepEqual(got, c.want) {
			t.Errorf("outermost(%v) = %v, want %v", c.changed, got, c.want)
		}
	}
	// The path watched is never left for its parent, whatever its name.
	w = &watcher{o: Options{Path: "/x/locks"}}
	if got := w.outermost(map[string]bool{"/x/locks": true}); !reflect.DeepEqual(got, []string{"/x/locks"}) {
		t.Errorf("outermost left the path watched: %v", got)
	}
}

// TestReplaced: a subtree's new read replaces its old one, and nothing
// else.
func TestReplaced(t *testing.T) {
	q := func(p string) tree.Queue { return tree.Queue{Queue: recipe.Queue{Path: p}} }
	old := tree.Tree{Queues: []tree.Queue{q("/l/a"), q("/l/a-b"), q("/l/a/c"), q("/l/z")},
		Skipped: []string{"/l/a/secret", "/l/y"}, Listed: []string{"/l", "/l/a", "/l/a-b", "/l/a/c", "/l/z"}}
	got := replaced(old, "/l/a", tree.Tree{Queues: []tree.Queue{q("/l/a/d")}, Listed: []string{"/l/a", "/l/a/d"}})
	want := tree.Tree{Queues: []tree.Queue{q("/l/a-b"), q("/l/a/d"), q("/l/z")},
		Skipped: []string{"/l/y"}, Listed: []string{"/l", "/l/a", "/l/a-b", "/l/a/d", "/l/z"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replaced = %+v\nwant %+v", got, want)
	}
	if got := replaced(old, "/", tree.Tree{}); len(got.Queues)+len(got.Skipped)+len(got.Listed) != 0 {
		t.Errorf("replacing / left %+v", got)
	}
}
