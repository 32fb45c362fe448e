package recipe

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

func TestAcquireRelease(t *testing.T) {
	path := testPath(t)
	c := client(t)
	data := zklockData(0)
	l, err := Acquire(ctxT(t, 10*time.Second), c, path, Request{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	ct, ok := ParseContender(l.Node[strings.LastIndexByte(l.Node, '/')+1:])
	if !ok || ct.Flavor != FlavorCurator || ct.Kind != Exclusive || len(ct.GUID) != 36 {
		t.Fatalf("node %s parses as %+v", l.Node, ct)
	}
	conn := raw(t)
	got, st, err := conn.Get(l.Node)
	if err != nil || string(got) != string(data) || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("node data/owner: %q %+v %v", got, st, err)
	}
	tok, err := l.FencingToken(ctxT(t, 5*time.Second))
	if err != nil || tok != st.Czxid {
		t.Fatalf("fencing token %d, %v; czxid %d", tok, err, st.Czxid)
	}
	if err := l.Release(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("second release: %v", err)
	}
	assertGone(t, path)
	assertGone(t, path[:strings.LastIndexByte(path, '/')])
}

func TestFIFOOrder(t *testing.T) {
	path := testPath(t)
	holder, err := Acquire(ctxT(t, 10*time.Second), client(t), path, Request{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	conn := raw(t)
	for i := 0; i < n; i++ {
		c := client(t)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l, err := Acquire(ctxT(t, 30*time.Second), c, path, Request{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l.Release(ctxT(t, 5*time.Second))
		}(i)
		// Join one at a time so the queue order is known.
		zktest.Eventually(t, 10*time.Second, "waiter to queue", func() bool {
			ch, _, _ := conn.Children(path)
			return len(ch) == i+2
		})
	}
	holder.Release(ctxT(t, 5*time.Second))
	wg.Wait()
	for i := range order {
		if order[i] != i {
			t.Fatalf("acquisition order %v, want FIFO", order)
		}
	}
}

// TestHerdFree proves each waiter watches only its predecessor: the server's
// own watch table (wchp) shows one watch per waiter, each on a different
// node, and the total watch count grows by exactly the number of waiters.
func TestHerdFree(t *testing.T) {
	path := testPath(t)
	ctx := ctxT(t, 60*time.Second)
	holder, err := Acquire(ctx, client(t), path, Request{})
	if err != nil {
		t.Fatal(err)
	}
	addr := shared.Server(t).Addrs()[0]
	before, err := zktest.Mntr(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 12
	conn := raw(t)
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < waiters; i++ {
		c := client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Acquire(wctx, c, path, Request{})
			if err != nil {
				errs <- err
				return
			}
			l.Release(ctx)
		}()
	}
	watched := awaitWatches(t, ctx, addr, path, 2*waiters)
	children, _, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	q := Contenders(children)
	if len(q) != waiters+1 {
		t.Fatalf("%d contenders, want %d", len(q), waiters+1)
	}
	others := othersWatching(t, conn, path, q, watched)
	for i, c := range q {
		switch {
		case i < waiters && others[i] != 1:
			t.Errorf("node %d (%s) is watched by %d other sessions, want exactly 1", i, c.Name, others[i])
		case i == waiters && others[i] != 0:
			t.Errorf("the last node is watched by %d other sessions, want 0", others[i])
		}
	}
	for p := range watched {
		if p == path {
			t.Errorf("the lock path itself is watched: a child watch means a herd")
		}
	}
	after, err := zktest.Mntr(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	// One watch on the node ahead and one on its own node per waiter.
	if d := atoi(t, after["zk_watch_count"]) - atoi(t, before["zk_watch_count"]); d != 2*waiters {
		t.Errorf("zk_watch_count grew by %d, want %d", d, 2*waiters)
	}
	holder.Release(ctx)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assertGone(t, path)
}

// othersWatching counts, for each node of q, the sessions other than its
// owner that watch it, and checks that each waiter (every node but the
// first) watches its own node: that watch tells it at the handoff whether
// its node was deleted, and it wakes nobody else.
func othersWatching(t *testing.T, conn *zk.Conn, path string, q []Contender, watched map[string][]int64) []int {
	t.Helper()
	out := make([]int, len(q))
	for i, c := range q {
		_, st, err := conn.Get(path + "/" + c.Name)
		if err != nil {
			t.Fatal(err)
		}
		self := false
		for _, s := range watched[path+"/"+c.Name] {
			if s == st.EphemeralOwner {
				self = true
			} else {
				out[i]++
			}
		}
		if self != (i > 0) {
			t.Errorf("node %d (%s): watched by its own session: %v, want %v", i, c.Name, self, i > 0)
		}
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}

func TestTryBusy(t *testing.T) {
	path := testPath(t)
	data := []byte(`{"zklock":"test","pid":42,"cmd":["sleep","60"]}`)
	holder, err := Acquire(ctxT(t, 10*time.Second), client(t), path, Request{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(ctxT(t, 10*time.Second), client(t), path, Request{Wait: NoWait})
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Try on a held lock: %v", err)
	}
	if !bytes.Equal(busy.Data, data) {
		t.Errorf("busy error does not describe the holder: %+v", busy)
	}
	children, _, err := raw(t).Children(path)
	if err != nil || len(children) != 1 {
		t.Fatalf("after a busy try the queue is %v (%v), want only the holder", children, err)
	}
	holder.Release(ctxT(t, 5*time.Second))
	assertGone(t, path)
}

// TestWaitUntil: a deadline ends a wait with ErrWaitTimeout and leaves
// nothing behind, for a lock and a semaphore alike; a free lock is taken
// even past the deadline, since the deadline bounds waiting, not taking.
func TestWaitUntil(t *testing.T) {
	for _, mode := range []Mode{ModeExclusive, ModeLimit(1)} {
		t.Run(mode.Kind().String(), func(t *testing.T) {
			path := testPath(t)
			ctx := ctxT(t, 10*time.Second)
			past := Request{Mode: mode, Wait: WaitUntil(time.Now().Add(-time.Second))}
			holder, err := Acquire(ctx, client(t), path, past)
			if err != nil {
				t.Fatalf("a free lock past the deadline: %v", err)
			}
			if _, err := Acquire(ctx, client(t), path, past); !errors.Is(err, ErrWaitTimeout) {
				t.Fatalf("a held lock past the deadline: %v, want ErrWaitTimeout", err)
			}
			soon := Request{Mode: mode, Wait: WaitUntil(time.Now().Add(200 * time.Millisecond))}
			if _, err := Acquire(ctx, client(t), path, soon); !errors.Is(err, ErrWaitTimeout) {
				t.Fatalf("a held lock until the deadline: %v, want ErrWaitTimeout", err)
			}
			holder.Release(ctx)
			assertGone(t, path)
		})
	}
}

func TestCancelWhileWaitingLeavesNothing(t *testing.T) {
	path := testPath(t)
	holder, err := Acquire(ctxT(t, 10*time.Second), client(t), path, Request{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Acquire(ctx, client(t), path, Request{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with a deadline: %v", err)
	}
	children, _, _ := raw(t).Children(path)
	if len(children) != 1 {
		t.Fatalf("after a cancelled wait the queue is %v, want only the holder", children)
	}
	holder.Release(ctxT(t, 5*time.Second))
	assertGone(t, path)
}

// TestProtectedCreate drops the connection after the server applied our
// create but before its reply arrived. The GUID in the node's name lets
// Acquire find its node instead of creating a second one, which would sit
// ahead of us in the queue for as long as the session lives.
func TestProtectedCreate(t *testing.T) {
	path := testPath(t)
	proxy := zktest.NewProxyT(t, shared.Server(t).Addrs()[0])
	c := dial(t, proxy.Addr(), nil)
	// Make the lock path exist first, so the trap catches the create of the
	// contender node rather than of a parent.
	setup, err := Acquire(ctxT(t, 10*time.Second), client(t), path, Request{})
	if err != nil {
		t.Fatal(err)
	}
	proxy.DropReplyAfter(zktest.OpCreate)
	done := make(chan error, 1)
	var l *Lease
	go func() {
		var err error
		l, err = Acquire(ctxT(t, 30*time.Second), c, path, Request{})
		done <- err
	}()
	select {
	case <-proxy.Fired():
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy never dropped a create reply")
	}
	conn := raw(t)
	zktest.Eventually(t, 10*time.Second, "our node to be queued once", func() bool {
		ch, _, _ := conn.Children(path)
		return len(ch) == 2
	})
	setup.Release(ctxT(t, 5*time.Second))
	if err := <-done; err != nil {
		t.Fatalf("acquire after a lost create reply: %v", err)
	}
	children, _, _ := conn.Children(path)
	if len(children) != 1 || path+"/"+children[0] != l.Node {
		t.Fatalf("queue %v, want only our node %s", children, l.Node)
	}
	l.Release(ctxT(t, 5*time.Second))
	assertGone(t, path)
}

// TestParentCreateConnectionLoss drops the connection after the server
// made a parent container of a lock path that did not exist yet, before
// its reply arrived: a blip that says nothing of the session. Acquire
// waits for the session and goes on, as it does for a lost reply to the
// contender's own create, rather than failing with a connection error
// that the caller cannot tell from an unreachable ensemble. (A pool's
// member path is often made afresh this way: its container is reaped
// whenever the member is free.)
func TestParentCreateConnectionLoss(t *testing.T) {
	path := testPath(t)
	proxy := zktest.NewProxyT(t, shared.Server(t).Addrs()[0])
	c := dial(t, proxy.Addr(), nil)
	proxy.DropReplyAfter(zktest.OpCreateContainer)
	l, err := Acquire(ctxT(t, 30*time.Second), c, path, Request{})
	select {
	case <-proxy.Fired():
	case <-time.After(10 * time.Second):
		// The proxy closes the connection just before it says so.
		t.Fatal("the proxy never dropped the reply to a parent's create")
	}
	if err != nil {
		t.Fatalf("acquire after a lost reply to a parent's create: %v", err)
	}
	children, _, _ := raw(t).Children(path)
	if len(children) != 1 || path+"/"+children[0] != l.Node {
		t.Fatalf("queue %v, want only our node %s", children, l.Node)
	}
	l.Release(ctxT(t, 5*time.Second))
	assertGone(t, path)
}

func TestEphemeralParent(t *testing.T) {
	base := testPath(t)
	conn := raw(t)
	parent := base[:strings.LastIndexByte(base, '/')]
	eph := parent + "/eph"
	// The test's parent is made a plain node (the shared root is one
	// already), so that no reaper takes it from under the ephemeral node.
	for _, p := range []string{parent, eph} {
		flags := int32(0)
		if p == eph {
			flags = zk.FlagEphemeral
		}
		if _, err := conn.Create(p, nil, flags, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{eph, eph + "/sub/lock"} {
		_, err := Acquire(ctxT(t, 10*time.Second), client(t), p, Request{})
		if !errors.Is(err, zkconn.ErrEphemeralParent) {
			t.Errorf("lock under an ephemeral node %s: %v", p, err)
		}
	}
	children, _, _ := conn.Children(eph)
	if len(children) != 0 {
		t.Errorf("left behind under the ephemeral node: %v", children)
	}
	conn.Delete(eph, -1)
	conn.Delete(parent, -1)
}

func TestChroot(t *testing.T) {
	path := testPath(t)
	root := "/chroot" + strings.TrimSuffix(path, "/lock")
	c := dial(t, shared.Server(t).ConnectString()+root, nil)
	l, err := Acquire(ctxT(t, 10*time.Second), c, "/locks/job", Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.Node, "/locks/job/_c_") {
		t.Errorf("node %s is not relative to the chroot", l.Node)
	}
	conn := raw(t)
	if ok, _, err := conn.Exists(root + l.Node); err != nil || !ok {
		t.Errorf("%s not found under the chroot: %v", root+l.Node, err)
	}
	q, err := Inspect(ctxT(t, 5*time.Second), c, "/locks/job")
	if err != nil || len(q.Entries) != 1 || !q.Entries[0].Holding {
		t.Errorf("inspect through the chroot: %+v %v", q, err)
	}
	l.Release(ctxT(t, 5*time.Second))
	assertGone(t, root+"/locks")
	assertGone(t, "/chroot"+strings.TrimSuffix(path, "/lock"))
}

func TestAuthACL(t *testing.T) {
	path := testPath(t)
	alice := &zkconn.Auth{Scheme: "digest", Credentials: "alice:secret"}
	c := dial(t, shared.Server(t).ConnectString(), alice)
	l, err := Acquire(ctxT(t, 10*time.Second), c, path, Request{})
	if err != nil {
		t.Fatal(err)
	}
	conn := raw(t)
	for _, p := range []string{path, l.Node} {
		acl, _, err := conn.GetACL(p)
		if err != nil || len(acl) != 2 || acl[0].Scheme != "digest" || acl[0].Perms != zk.PermAll ||
			acl[1].Scheme != "world" || acl[1].Perms != zk.PermRead {
			t.Errorf("ACL of %s = %+v (%v)", p, acl, err)
		}
	}
	// Others can read the queue but cannot delete the holder or join.
	if err := conn.Delete(l.Node, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous delete of the holder: %v", err)
	}
	mallory := dial(t, shared.Server(t).ConnectString(), &zkconn.Auth{Scheme: "digest", Credentials: "alice:wrong"})
	_, err = Acquire(ctxT(t, 10*time.Second), mallory, path, Request{})
	if !zkconn.IsPermission(err) {
		t.Errorf("wrong password: %v", err)
	}
	q, err := Inspect(ctxT(t, 5*time.Second), mallory, path)
	if err != nil || len(q.Holders()) != 1 {
		t.Errorf("others cannot read the queue: %+v %v", q, err)
	}
	l.Release(ctxT(t, 5*time.Second))
	children, _, _ := conn.Children(path)
	if len(children) != 0 {
		t.Errorf("left behind: %v", children)
	}
}

func TestInspectForeignNodes(t *testing.T) {
	path := testPath(t)
	c := client(t)
	mine, err := Acquire(ctxT(t, 10*time.Second), c, path, Request{Data: zklockData(0)})
	if err != nil {
		t.Fatal(err)
	}
	conn := raw(t)
	kazoo, err := conn.Create(path+"/0123456789abcdef0123456789abcdef__rlock__", []byte("worker-7"), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(path+"/_c_11111111-2222-4333-8444-555555555555-lock-", []byte("10.0.0.7"), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	q, err := Inspect(ctxT(t, 5*time.Second), c, path)
	if err != nil || q.Path != path || len(q.Entries) != 3 {
		t.Fatalf("Inspect = %+v, %v", q, err)
	}
	e := q.Entries
	if !byZklock(e[0].Data) || !e[0].Holding || e[1].Flavor != FlavorKazoo || e[1].Kind != Shared || string(e[1].Data) != "worker-7" ||
		e[1].Holding || string(e[2].Data) != "10.0.0.7" || e[2].Flavor != FlavorCurator || byZklock(e[2].Data) {
		t.Errorf("entries = %+v", e)
	}
	if e[1].Path+"/"+e[1].Name != kazoo {
		t.Errorf("entry path %s/%s, want %s", e[1].Path, e[1].Name, kazoo)
	}
	names := []string{e[0].Name, e[1].Name, e[2].Name}
	if !sort.SliceIsSorted(names, func(i, j int) bool { return e[i].Seq < e[j].Seq }) {
		t.Errorf("entries not in queue order: %v", names)
	}
	mine.Release(ctxT(t, 5*time.Second))
}

// TestLockPathChildNoContender: a child of the lock path whose name merely
// ends in a sequence number is a contender only if a session owns it, as
// list and holders count (Queued, docs/guide/list.md). A lock path of its
// own below this one, such as build-0000000001, never holds this lock,
// however its number sorts against ours; an ephemeral node of that shape,
// another client's contender, still does.
func TestLockPathChildNoContender(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	c := client(t)
	path := testPath(t)
	nested, err := Acquire(ctx, c, path+"/build-0000000001", Request{})
	if err != nil {
		t.Fatal(err)
	}
	// Our first node at path is number 1 (the nested path's create was
	// the 0th change), which sorts before build-0000000001 by name; the
	// next one is number 3, after it.
	for range 2 {
		l, err := Acquire(ctx, c, path, Request{Wait: NoWait})
		if err != nil {
			t.Fatalf("a lock beside the lock path %s/build-0000000001: %v", path, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	conn := raw(t)
	foreign, err := conn.Create(path+"/other-0000000000", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(ctx, c, path, Request{Wait: NoWait}); !errors.As(err, new(*BusyError)) {
		t.Errorf("beside another client's ephemeral other-0000000000: %v, want busy", err)
	}
	if err := conn.Delete(foreign, -1); err != nil {
		t.Fatal(err)
	}
	if err := nested.Release(ctx); err != nil {
		t.Fatal(err)
	}
	assertGone(t, path)
}
