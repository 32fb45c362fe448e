package e2e

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestOnlyHolderAndNextSync: the quorum keepalive's syncs serve a holder,
// whose guard counts from QuorumHeard. The holder and the waiter next in
// line (which may hold at any moment) send them; a waiter deep in the
// queue sends the ensemble nothing but its pings.
func TestOnlyHolderAndNextSync(t *testing.T) {
	path := lockPath(t)
	addr := server(t).Addrs()[0]
	conn := rawZK(t)
	startHolderArgs(t, []string{"--session-timeout", "4s", "run", "--path", path})
	for i := range 2 {
		w := zklock(t, "--session-timeout", "4s", "run", "--path", path, "--", "true")
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopWaiter(w) })
		zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == i+2 })
	}
	children, _, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	q := recipe.Contenders(children)
	if len(q) != 3 {
		t.Fatalf("queue %v, want a holder and two waiters", children)
	}
	roles := []string{"the holder", "the next waiter", "the deep waiter"}
	sids := make([]int64, len(q))
	for i, c := range q {
		_, st, err := conn.Exists(path + "/" + c.Name)
		if err != nil {
			t.Fatal(err)
		}
		sids[i] = st.EphemeralOwner
	}
	read := func() []zktest.SessionConn {
		out := make([]zktest.SessionConn, len(sids))
		for i, sid := range sids {
			s, ok, err := zktest.ConsSession(t.Context(), addr, sid)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatalf("the server carries no session for %s", roles[i])
			}
			out[i] = s
		}
		return out
	}
	// The deep waiter has settled once a ping is answered after its
	// watches: the server answers a connection's requests in order.
	var before []zktest.SessionConn
	zktest.Eventually(t, 10*time.Second, "the deep waiter to settle", func() bool {
		before = read()
		return before[2].LastOp == "PING"
	})
	// Two pings of the deep waiter's (one every T/3): 13 periods of the
	// syncs.
	var after []zktest.SessionConn
	zktest.Eventually(t, 10*time.Second, "two pings of the deep waiter", func() bool {
		after = read()
		return after[2].Received >= before[2].Received+2
	})
	for i := range 2 {
		if n := after[i].LastXid - before[i].LastXid; n < 5 {
			t.Errorf("%s sent %d requests of its own over two pings, want its syncs (one every T/20)", roles[i], n)
		}
	}
	if after[2].LastXid != before[2].LastXid {
		t.Errorf("the deep waiter sent requests of its own (last xid %d, then %d, %s)",
			before[2].LastXid, after[2].LastXid, after[2].LastOp)
	}
}

// stopWaiter ends a waiting zklock as a signal does: it leaves the queue.
func stopWaiter(w *exec.Cmd) {
	w.Process.Signal(syscall.SIGTERM)
	w.Wait()
}
