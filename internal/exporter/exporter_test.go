package exporter

import (
	"context"
	"io"
	"net"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

func TestMain(m *testing.M) { shared.Main(m) }

// contender is the name prefix of a Curator-style exclusive contender; the
// server appends the sequence number.
const contender = "_c_11111111-2222-4333-8444-555555555555-lock-"

var openACL = zk.WorldACL(zk.PermAll)

// startExporter runs an exporter of root on servers, on a free loopback
// port, until the test ends; it returns the address it serves.
func startExporter(t *testing.T, servers, root string) string {
	t.Helper()
	cs, err := zkconn.ParseConnString(servers)
	if err != nil {
		t.Fatal(err)
	}
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		done <- Run(ctx, Options{Conn: zkconn.Options{ConnString: cs, SessionTimeout: 4 * time.Second, ConnectTimeout: time.Second},
			Path: root, Listen: "127.0.0.1:0", MaxPaths: DefaultMaxPaths, Listening: func(a net.Addr) { addrs <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the exporter ended with %v", err)
		}
	})
	select {
	case a := <-addrs:
		return a.String()
	case err := <-done:
		t.Fatalf("the exporter did not start: %v", err)
	}
	return ""
}

// scrape fetches the exporter's /metrics page.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// awaitPage scrapes until every line is on the page, or fails after
// within.
func awaitPage(t *testing.T, addr string, within time.Duration, lines ...string) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		page := scrape(t, addr)
		missing := ""
		for _, l := range lines {
			if !strings.Contains(page, "\n"+l+"\n") {
				missing = l
				break
			}
		}
		if missing == "" {
			return page
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, no line %s in:\n%s", within, missing, page)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mkdirs makes p and its parents.
func mkdirs(t *testing.T, conn *zk.Conn, p string) {
	t.Helper()
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if _, err := conn.Create(p[:i], nil, 0, openACL); err != nil && err != zk.ErrNodeExists {
				t.Fatal(err)
			}
		}
	}
}

// join adds a contender to the queue at lockPath on conn's session.
func join(t *testing.T, conn *zk.Conn, lockPath string, data []byte) string {
	t.Helper()
	p, err := conn.Create(lockPath+"/"+contender, data, zk.FlagEphemeralSequential, openACL)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// nodes lists every node at or below p.
func nodes(t *testing.T, conn *zk.Conn, p string) []string {
	t.Helper()
	out := []string{p}
	kids, _, err := conn.Children(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		out = append(out, nodes(t, conn, path.Join(p, k))...)
	}
	slices.Sort(out)
	return out
}

// TestServesTree: the exporter shows a queue and its changes, sets one
// child watch per listed node (measured with wchp) and none per
// contender, and creates no node.
func TestServesTree(t *testing.T) {
	conn := shared.Raw(t)
	root := shared.Dir(t)
	a, b := root+"/jobs/a", root+"/b"
	mkdirs(t, conn, a)
	mkdirs(t, conn, b)
	holder := owner.Owner{Zklock: "test", Host: "web\"1", PID: 7, Cmd: []string{"/bin/sleep", "60"}, Acquired: time.Now()}
	join(t, conn, a, holder.Encode())
	const waiters = 20
	for range waiters {
		join(t, conn, a, []byte("10.0.0.\xff9"))
	}
	before := nodes(t, conn, root)

	srv := shared.Server(t)
	addr0 := srv.Server(0).Addr()
	watchesBefore := watchCount(t, addr0)
	addr := startExporter(t, srv.ConnectString(), root)
	awaitPage(t, addr, 30*time.Second,
		"zklock_exporter_up 1",
		`zklock_lock_holders{path="`+a+`"} 1`,
		`zklock_lock_waiters{path="`+a+`"} `+strconv.Itoa(waiters),
		`zklock_lock_holder_info{path="`+a+`",host="web\"1",pid="7",command="sleep",flavor="curator"} 1`)

	// A waiter joins b: shown by a watch, not a poll.
	added := join(t, conn, b, []byte("kazoo-client"))
	page := awaitPage(t, addr, 30*time.Second, `zklock_lock_holders{path="`+b+`"} 1`, "zklock_exporter_lock_paths 2",
		`zklock_lock_holder_info{path="`+b+`",host="kazoo-client",pid="",command="",flavor="curator"} 1`)
	t.Logf("page:\n%s", page)

	// Its watches: a child watch per listed node (root, root/jobs, a,
	// b), counted by mntr, and no data watch (wchp lists those) on any
	// contender. No other test of this package runs meanwhile, so the
	// server's count changes by the exporter's watches alone.
	zktest.Eventually(t, 10*time.Second, "4 child watches more", func() bool {
		return watchCount(t, addr0) == watchesBefore+4
	})
	w, err := zktest.Wchp(shared.Ctx(t, 10*time.Second), addr0)
	if err != nil {
		t.Fatal(err)
	}
	for p := range w {
		if p == root || strings.HasPrefix(p, root+"/") {
			t.Errorf("a data watch on %s", p)
		}
	}
	after := nodes(t, conn, root)
	if before = append(before, added); !slices.Equal(slices.Sorted(slices.Values(before)), after) {
		t.Errorf("the nodes below %s changed beyond the one added:\nbefore %v\nafter  %v", root, before, after)
	}
}

// watchCount is the server's count of watches, data and child.
func watchCount(t *testing.T, addr string) int {
	t.Helper()
	m, err := zktest.Mntr(shared.Ctx(t, 10*time.Second), addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(m["zk_watch_count"])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
