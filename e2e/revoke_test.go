package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// revoke runs `zklock revoke ARGS` to its end and returns its exit code
// and output.
func revoke(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c := zklock(t, append([]string{"revoke"}, args...)...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	return zktest.ExitCodeT(t, c.Run()), out.String(), errOut.String()
}

// sortedChildren lists a lock path's contenders in queue order.
func sortedChildren(t *testing.T, path string) []string {
	t.Helper()
	ch, _, err := rawZK(t).Children(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range recipe.Contenders(ch) {
		names = append(names, c.Name)
	}
	return names
}

// TestRevokeHolder revokes a holder whose command is a process tree: the
// whole tree dies before the waiter's command starts (overlap detector),
// the holder exits 76 naming who revoked it, and nothing is left behind.
func TestRevokeHolder(t *testing.T) {
	conn := rawZK(t)
	p := startPair(t, nil, nil, func(path string) int { return queueLen(conn, path) })
	code, out, errOut := revoke(t, "--path", p.path)
	if code != 0 || !strings.Contains(out, "revoked "+p.path+" holder") {
		t.Fatalf("revoke exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code := zktest.ExitCodeT(t, p.holder.Wait()); code != 76 {
		t.Fatalf("holder exit %d, want 76; stderr: %s", code, p.holderErr.String())
	}
	me, _ := user.Current()
	msg := p.holderErr.String()
	t.Logf("revoke: %s holder: %s", out, msg)
	if !strings.Contains(msg, "revoked by "+me.Username+"@") || !strings.Contains(msg, " at ") {
		t.Errorf("the holder does not say who revoked it and when: %s", msg)
	}
	p.waiterNext(t)
	assertGone(t, conn, p.path)
}

// TestRevokeWaiter revokes a waiter by its node: it leaves the queue at
// once without running its command (exit 76), and the holder is undisturbed.
func TestRevokeWaiter(t *testing.T) {
	dir, path := t.TempDir(), lockPath(t)
	conn := rawZK(t)
	holder, holderErr, waiter, waiterErr := gatedPair(t, dir, path, "h", "w")
	q := sortedChildren(t, path)
	code, out, errOut := revoke(t, "--path", path, "--node", q[1])
	if code != 0 || !strings.Contains(out, "waiter") {
		t.Fatalf("revoke exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	wantExit(t, waiter, waiterErr, 76, "revoked waiter")
	t.Logf("waiter: %s", waiterErr)
	if !strings.Contains(waiterErr.String(), "left the queue") {
		t.Errorf("the waiter does not say it left the queue: %s", waiterErr)
	}
	if fileExists(filepath.Join(dir, "w.started")) {
		t.Errorf("the revoked waiter ran its command")
	}
	if n := queueLen(conn, path); n != 1 {
		t.Errorf("%d contenders left, want the holder alone", n)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	assertGone(t, conn, path)
}

// TestRevokeNothing: a lock nobody holds, or a contender that is not
// there, is nothing to revoke (exit 0), and revoke creates nothing.
func TestRevokeNothing(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	for _, args := range [][]string{{"--path", path}, {"--path", path, "--wait", "--timeout", "1s"},
		{"--path", path, "--node", "_c_00000000-0000-0000-0000-000000000000-lock-0000000001"}} {
		code, out, errOut := revoke(t, args...)
		if code != 0 || !strings.Contains(out, "nothing to revoke") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	// A well-formed name that is not there: a contender that left. What
	// revoke prints of it is escaped (a bidi override, which the server
	// allows in a name, would reorder the line).
	code, out, errOut := revoke(t, "--path", path, "--node", "\u202eevil-0000000001")
	if code != 0 || !strings.Contains(out, `no contender \u202eevil-0000000001`) || errOut != "" {
		t.Errorf("an absent contender: exit %d, stdout %q, stderr %q; want 0 and the name escaped", code, out, errOut)
	}
	// A name no contender could have is a mistake: 64, one escaped line.
	for _, node := range []string{"../x", "/elsewhere/n-0000000001", "a/b-0000000001", "foo", "n\x1b]0;owned\a-0000000001\n"} {
		code, out, errOut := revoke(t, "--path", path, "--node", node)
		if code != 64 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "zklock: bad node: ") ||
			strings.ContainsAny(errOut, "\x1b\a") {
			t.Errorf("--node %q: exit %d, stdout %q, stderr %q; want 64 and one escaped line", node, code, out, errOut)
		}
	}
	if ok, _, err := conn.Exists(path); err != nil || ok {
		t.Errorf("revoke left %s on the server (exists %v, %v)", path, ok, err)
	}
}

// TestRevokeIgnored: a holder started with --on-revoke ignore lets its
// command finish; list shows the revocation as pending and who asked;
// revoke --wait --timeout gives up with 75; then the command ends and the
// holder exits 0, and revoke --wait of a terminating holder returns once
// it has released.
func TestRevokeIgnored(t *testing.T) {
	dir, path := t.TempDir(), lockPath(t)
	conn := rawZK(t)
	holder, holderErr := startGated(t, dir, "h", "run", "--on-revoke", "ignore", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })

	start := time.Now()
	code, _, errOut := revoke(t, "--path", path, "--wait", "--timeout", "1s")
	if code != 75 || !strings.Contains(errOut, "not released within 1s") {
		t.Fatalf("revoke --wait --timeout 1s: exit %d, stderr %q", code, errOut)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("revoke gave up after %s, before its timeout", took)
	}
	zktest.Eventually(t, 10*time.Second, "the holder's warning", func() bool { return strings.Contains(holderErr.String(), "keeps running") })
	var listed bytes.Buffer
	zktest.Eventually(t, 10*time.Second, "list to show the pending revocation", func() bool {
		c := zklock(t, "list", "--path", path)
		listed.Reset()
		c.Stdout = &listed
		// The holder still shows as itself: its command line, not the
		// bare request.
		return c.Run() == nil && strings.Contains(listed.String(), "holding, revoke pending") &&
			strings.Contains(listed.String(), "flock -n")
	})
	t.Logf("list:\n%s", listed.String())
	c := zklock(t, "holders", "--path", path, "--json")
	var js bytes.Buffer
	c.Stdout = &js
	if err := c.Run(); err != nil || !strings.Contains(js.String(), `"revoke"`) || !strings.Contains(js.String(), `"pid"`) {
		t.Errorf("holders --json does not show the holder and its pending revocation (%v): %s", err, js.String())
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder that ignores revocations")
	assertGone(t, conn, path)

	// A holder that obeys: revoke --wait returns once it has released.
	holder, holderErr = startGated(t, dir, "h2", "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the second holder's command", func() bool { return fileExists(filepath.Join(dir, "h2.started")) })
	code, out, errOut := revoke(t, "--path", path, "--wait", "--timeout", "30s")
	if code != 0 || !strings.Contains(out, "released "+path) {
		t.Fatalf("revoke --wait: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if ok, _, _ := conn.Exists(path); ok && queueLen(conn, path) != 0 {
		t.Errorf("revoke --wait returned before the holder released")
	}
	wantExit(t, holder, holderErr, 76, "revoked holder")
	assertGone(t, conn, path)
}

// TestRevokeSemaphoreWaiter revokes a semaphore's waiting lease by its
// node. The waiter holds the semaphore's internal mutex while it waits for
// a lease, so the whole queue waits behind it: it must leave at once
// (exit 76, command not run), not when a lease frees up, and a third
// contender then queues and takes the lease once the holder is done.
func TestRevokeSemaphoreWaiter(t *testing.T) {
	dir, path, conn, holder, holderErr, waiter, waiterErr := semaphoreBusy(t)
	q := sortedChildren(t, path+"/leases")
	code, out, errOut := revoke(t, "--path", path, "--node", q[1])
	if code != 0 || !strings.Contains(out, "waiter") {
		t.Fatalf("revoke exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	done := make(chan error, 1)
	go func() { done <- waiter.Wait() }()
	select {
	case err := <-done:
		if code := zktest.ExitCodeT(t, err); code != 76 {
			t.Fatalf("revoked waiter exit %d, want 76; stderr: %s", code, waiterErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the revoked semaphore waiter still waits: %s", waiterErr)
	}
	if fileExists(filepath.Join(dir, "w.started")) {
		t.Errorf("the revoked waiter ran its command")
	}
	third, thirdErr := startGated(t, dir, "x", "run", "--limit", "1", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the third's lease", func() bool { return queueLen(conn, path+"/leases") == 2 })
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	zktest.Eventually(t, 10*time.Second, "the third's command", func() bool { return fileExists(filepath.Join(dir, "x.started")) })
	touch(t, filepath.Join(dir, "x"))
	wantExit(t, third, thirdErr, 0, "third")
	assertGone(t, conn, path)
}

// TestRevokeSemaphoreMutexWaiter revokes, by the NODE list shows
// (locks/NAME), a contender that waits in a semaphore's internal mutex for
// its turn to create a lease: it leaves (76, command not run), and the
// waiting lease and the holder are undisturbed.
func TestRevokeSemaphoreMutexWaiter(t *testing.T) {
	dir, path, conn, holder, holderErr, waiter, waiterErr := semaphoreBusy(t)
	third, thirdErr := startGated(t, dir, "x", "run", "--limit", "1", "--path", path)
	// The waiter holds the mutex while it waits for a lease; the third
	// queues behind it in locks/.
	zktest.Eventually(t, 10*time.Second, "the third in the mutex's queue", func() bool { return queueLen(conn, path+"/locks") == 2 })
	q := sortedChildren(t, path+"/locks")
	code, out, errOut := revoke(t, "--path", path, "--node", "locks/"+q[1])
	if code != 0 || !strings.Contains(out, "waiter") {
		t.Fatalf("revoke exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	wantExit(t, third, thirdErr, 76, "revoked mutex waiter")
	if fileExists(filepath.Join(dir, "x.started")) {
		t.Errorf("the revoked waiter ran its command")
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	zktest.Eventually(t, 10*time.Second, "the waiter's command", func() bool { return fileExists(filepath.Join(dir, "w.started")) })
	touch(t, filepath.Join(dir, "w"))
	wantExit(t, waiter, waiterErr, 0, "waiter")
	assertGone(t, conn, path)
}

// semaphoreBusy starts, at a new path, a gated holder (h) of a semaphore of
// limit 1 and a gated waiter (w) whose lease waits beyond the limit, and
// returns once that lease is there.
func semaphoreBusy(t *testing.T) (dir, path string, conn *zk.Conn, holder *exec.Cmd, holderErr *syncBuffer, waiter *exec.Cmd, waiterErr *syncBuffer) {
	t.Helper()
	dir, path = t.TempDir(), lockPath(t)
	conn = rawZK(t)
	holder, holderErr = startGated(t, dir, "h", "run", "--limit", "1", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	waiter, waiterErr = startGated(t, dir, "w", "run", "--limit", "1", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the waiter's lease", func() bool { return queueLen(conn, path+"/leases") == 2 })
	return dir, path, conn, holder, holderErr, waiter, waiterErr
}

// TestRevokeLongQueue: revoke finds the holder from the listing, in
// sequence order, and reads only the holder's node, so 20,000 waiters
// (created by a raw client in a few multi requests) cost it a listing,
// not 20,000 reads; and --timeout counts from revoke's start, so
// revoke --wait --timeout 3s of a holder that goes on (--on-revoke ignore)
// gives up 3s after it started, not 3s after it had read the queue.
func TestRevokeLongQueue(t *testing.T) {
	dir, path := t.TempDir(), lockPath(t)
	holder, holderErr := startGated(t, dir, "h", "run", "--on-revoke", "ignore", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	conn := zktest.DialTSession(t, server(t).Addrs(), 30*time.Second)
	const waiters, batch = 20000, 2000
	for i := 0; i < waiters; i += batch {
		var ops []any
		for range batch {
			ops = append(ops, &zk.CreateRequest{Path: path + "/_c_00000000-0000-0000-0000-000000000000-lock-",
				Data: []byte("10.0.0.1"), Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagEphemeral | zk.FlagSequence})
		}
		if _, err := conn.Multi(ops...); err != nil {
			t.Fatal(err)
		}
	}
	if n := queueLen(conn, path); n != waiters+1 {
		t.Fatalf("%d contenders, want %d", n, waiters+1)
	}
	start := time.Now()
	code, out, errOut := revoke(t, "--path", path)
	took := time.Since(start)
	t.Logf("revoke of the holder of a queue of %d: %s", waiters+1, took.Round(time.Millisecond))
	if code != 0 || !strings.Contains(out, "revoked "+path+" holder") || strings.Count(out, "\n") != 1 {
		t.Fatalf("revoke: exit %d, stdout %q, stderr %q; want the holder alone asked", code, out, errOut)
	}
	start = time.Now()
	code, _, errOut = revoke(t, "--path", path, "--wait", "--timeout", "3s")
	took = time.Since(start)
	t.Logf("revoke --wait --timeout 3s: exit %d after %s", code, took.Round(time.Millisecond))
	if code != 75 || !strings.Contains(errOut, "not released within 3s") {
		t.Errorf("revoke --wait --timeout 3s: exit %d, stderr %q; want 75", code, errOut)
	}
	// The ceiling leaves room for starting a race-detector build and
	// closing its session on a loaded machine; reading the 20,000 nodes
	// before the wait took 5s more.
	if took > 5500*time.Millisecond {
		t.Errorf("revoke --wait --timeout 3s returned after %s: the timeout did not count from its start", took)
	}
	conn.Close()
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder that ignores revocations")
	assertGone(t, rawZK(t), path)
}

// TestRevokeGraceShowsHolder: while a revoked holder's command runs out
// its kill grace (it ignores SIGTERM), holders still shows who holds the
// lock, host, pid and command, with the revocation pending, and JSON says
// the node is zklock's, until the holder has released.
func TestRevokeGraceShowsHolder(t *testing.T) {
	dir, path := t.TempDir(), lockPath(t)
	c := zklock(t, "run", "--kill-grace", "30s", "--path", path, "--", "sh", "-c", `trap '' TERM; touch "$1/started"; while :; do sleep 0.05; done`, "sh", dir)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	if code, out, errOut := revoke(t, "--path", path); code != 0 {
		t.Fatalf("revoke: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var js bytes.Buffer
	zktest.Eventually(t, 10*time.Second, "holders --json to show the revoked holder", func() bool {
		h := zklock(t, "holders", "--path", path, "--json")
		js.Reset()
		h.Stdout = &js
		return h.Run() == nil && strings.Contains(js.String(), `"revoke"`)
	})
	if !strings.Contains(js.String(), `"zklock": true`) && !strings.Contains(js.String(), `"zklock":true`) ||
		!strings.Contains(js.String(), fmt.Sprintf(`%d`, c.Process.Pid)) {
		t.Errorf("during the kill grace, holders --json shows %s; want the holder (zklock, pid %d) with the revocation pending", js.String(), c.Process.Pid)
	}
	if c.ProcessState != nil {
		t.Fatal("the holder had released already: the test saw nothing of the grace")
	}
	c.Process.Kill()
}
