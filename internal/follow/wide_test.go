package follow

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// TestWideTreeReadOnce: a watch of a node with thousands of lock paths
// below it reads the tree in batches, as list does, and sets one watch
// per lock path: the requests to show it first are about one per lock
// path. Each lock path's watch is set after the read that found it, and
// was once followed by a read of that lock path alone, one at a time:
// three requests per lock path, and seconds of CPU re-sorting the tree
// after each, before the first snapshot of 5,000 locks showed (7s,
// against 45ms for list).
func TestWideTreeReadOnce(t *testing.T) {
	const locks = 2000
	conn := shared.Raw(t)
	root := shared.Dir(t)
	wideTree(t, conn, root, locks)
	srv := shared.Server(t)
	w := start(t, srv.ConnectString(), 4*time.Second, Options{Path: root})
	w.next("every lock", 60*time.Second, queue(locks, locks))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := zktest.Cons(ctx, srv.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	// The watch's session is the one that sent the most requests: the
	// test's own sent a few, to build the tree in batches.
	var most int64
	for _, id := range sessionIDs(out) {
		if id == conn.SessionID() {
			continue
		}
		c, ok, err := zktest.ConsSession(ctx, srv.Addrs()[0], id)
		if err == nil && ok && c.LastXid > most {
			most = c.LastXid
		}
	}
	t.Logf("requests before the first snapshot of %d locks: %d", locks, most)
	if most > locks+locks/4 {
		t.Errorf("%d requests to show %d locks the first time, want about one per lock path", most, locks)
	}
}

// sessionIDs are the sessions a `cons` reply names.
func sessionIDs(cons string) []int64 {
	var ids []int64
	for _, f := range strings.FieldsFunc(cons, func(r rune) bool { return r == ',' || r == '(' || r == ')' || r == '\n' }) {
		if v, ok := strings.CutPrefix(f, "sid=0x"); ok {
			if id, err := strconv.ParseUint(v, 16, 64); err == nil {
				ids = append(ids, int64(id))
			}
		}
	}
	return ids
}

// TestWideTreeOverSlowLink: the watches on a wide tree's lock paths are
// set many at a time, as the tree is read: over a 20ms round trip, 1,000
// lock paths show in well under the 20s that setting them one after
// another takes.
func TestWideTreeOverSlowLink(t *testing.T) {
	const locks = 1000
	conn := shared.Raw(t)
	root := shared.Dir(t)
	wideTree(t, conn, root, locks)
	p := zktest.NewProxyT(t, shared.Server(t).Addrs()[0])
	p.SetDelay(10 * time.Millisecond)
	// One request after another over this link, as a client that set
	// the watches one at a time would: a busy machine stretches each
	// round trip, and the bound stretches with it. Watches set many at a
	// time must show the tree in under a quarter of what setting them
	// one after another takes, and within 5s on an idle machine.
	rtt := serialRoundTrip(t, p.Addr(), root, 20)
	limit := max(5*time.Second, time.Duration(locks)*rtt/4)
	began := time.Now()
	w := start(t, p.Addr(), 4*time.Second, Options{Path: root})
	s := w.next("every lock", 30*time.Second+2*limit, queue(locks, locks))
	took := s.at.Sub(began)
	t.Logf("%d locks shown %s after the start, over a %s round trip (bound %s)", locks, took, rtt, limit)
	if took > limit {
		t.Errorf("%d locks took %s to show over a %s round trip, more than %s", locks, took, rtt, limit)
	}
}

// TestShownUnderChurn: lock paths keep appearing and going below a node
// with hundreds of others, each with a contender that comes and goes, for
// longer than a read takes. The watch must go on showing: each read
// finds nodes whose watches fired meanwhile, and reading them again
// before showing anything never ended.
func TestShownUnderChurn(t *testing.T) {
	const locks = 500
	conn := shared.Raw(t)
	root := shared.Dir(t)
	wideTree(t, conn, root, locks)
	w := start(t, shared.Server(t).ConnectString(), 4*time.Second, Options{Path: root})
	w.next("every lock", 20*time.Second, queue(locks, locks))
	ctx, cancel := context.WithCancel(context.Background())
	churned := make(chan struct{})
	defer func() {
		cancel()
		<-churned
	}()
	go func() {
		defer close(churned)
		// Five lock paths at a time, each the newest for a moment.
		var live []string
		for i := 0; ctx.Err() == nil; i++ {
			d := fmt.Sprintf("%s/d%06d", root, i)
			conn.Create(d, nil, 0, openACL)
			if n, err := conn.Create(d+"/"+contender, nil, zk.FlagEphemeralSequential, openACL); err == nil {
				live = append(live, n)
			}
			if len(live) > 5 {
				conn.Delete(live[0], -1)
				conn.Delete(path.Dir(live[0]), -1)
				live = live[1:]
			}
		}
	}()
	for range 3 {
		w.next("a lock path that came and went", 5*time.Second, func(s Snapshot) bool {
			for _, q := range s.Tree.Queues {
				if strings.HasPrefix(q.Path, root+"/d") {
					return true
				}
			}
			return false
		})
	}
}

// wideTree creates n lock paths below root, each held by a persistent
// contender, in a few requests.
func wideTree(t *testing.T, conn *zk.Conn, root string, n int) {
	t.Helper()
	mkdirs(t, conn, root)
	var ops []any
	for i := range n {
		p := fmt.Sprintf("%s/l%05d", root, i)
		ops = append(ops, &zk.CreateRequest{Path: p, Acl: openACL},
			&zk.CreateRequest{Path: p + "/" + contender + "0000000000", Data: []byte("x"), Acl: openACL})
		if len(ops) >= 400 || i == n-1 {
			if _, err := conn.Multi(ops...); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
}

// serialRoundTrip is the mean time of n reads of node sent one after
// another over a new connection to addr.
func serialRoundTrip(t *testing.T, addr, node string, n int) time.Duration {
	t.Helper()
	c := zktest.DialT(t, []string{addr})
	if _, _, err := c.Exists(node); err != nil { // the session, set up
		t.Fatal(err)
	}
	began := time.Now()
	for range n {
		if _, _, err := c.Exists(node); err != nil {
			t.Fatal(err)
		}
	}
	return time.Since(began) / time.Duration(n)
}
