package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestForget: forget deletes a job's success record and names it (its
// server time in UTC, host, pid and command), so that the next --once-per
// run goes ahead; the lock path, left empty, is reaped. Without a record it
// says so and exits 0; a bad path is one line and 64.
func TestForget(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	runs := filepath.Join(t.TempDir(), "runs")
	job := []string{"tryrun", "--once-per", "1h", "--path", path, "--", "sh", "-c", `echo x >> "$1"`, "sh", runs}
	run := func(args ...string) result {
		t.Helper()
		return runWithin(t, 20*time.Second, zklock(t, args...))
	}
	if r := run(job...); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr: %s", r.code, r.stderr)
	}
	at := recordAt(t, conn, path)
	if r := run(job...); r.code != 75 || lines(runs) != 1 {
		t.Fatalf("run within the window: exit %d, %d runs; want 75 and 1", r.code, lines(runs))
	}

	host, _ := os.Hostname()
	r := run("-v", "forget", "--path", path)
	want := "forgot the last success at " + path + ": " + at.UTC().Format(time.RFC3339) + " on " + host + " pid "
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.HasSuffix(r.stdout, " (sh -c 'echo x >> \"$1\"' sh "+runs+")\n") ||
		strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stderr, "deleted "+path+"/"+success.NodeName) {
		t.Fatalf("forget: exit %d, stdout %q, stderr %q; want 0 and %q…", r.code, r.stdout, r.stderr, want)
	}
	// Nothing else held the lock path: it is empty, and reaped.
	assertGone(t, conn, path)

	if r := run("forget", "--path", path); r.code != 0 || r.stdout != "no success recorded at "+path+"\n" || r.stderr != "" {
		t.Errorf("forget without a record: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(job...); r.code != 0 || lines(runs) != 2 {
		t.Errorf("run after forget: exit %d, %d runs; want 0 and 2; stderr: %s", r.code, lines(runs), r.stderr)
	}
	if r := run("forget", "--path", path+"/"); r.code != 64 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
		!strings.HasPrefix(r.stderr, "zklock: bad path: ") {
		t.Errorf("forget of a bad path: exit %d, stdout %q, stderr %q; want 64 and one line", r.code, r.stdout, r.stderr)
	}
	if recordAt(t, conn, path).IsZero() {
		t.Error("a forget of a bad path deleted the record")
	}
	if r := run("forget", "--path", path); r.code != 0 {
		t.Errorf("forget: exit %d; stderr: %s", r.code, r.stderr)
	}
	assertGone(t, conn, path)
}

// TestForgetSeveralPaths: a job of several paths keeps its record at the
// first in sorted order; forget given the same paths, in any order, deletes
// that one, and the job runs again.
func TestForgetSeveralPaths(t *testing.T) {
	root := lockPath(t)
	a, b := root+"/a", root+"/b"
	conn := rawZK(t)
	runs := filepath.Join(t.TempDir(), "runs")
	job := []string{"tryrun", "--once-per", "1h", "--path", b, "--path", a, "--", "sh", "-c", `echo x >> "$1"`, "sh", runs}
	run := func(args ...string) result {
		t.Helper()
		return runWithin(t, 20*time.Second, zklock(t, args...))
	}
	if r := run(job...); r.code != 0 || recordAt(t, conn, a).IsZero() {
		t.Fatalf("first run: exit %d; stderr: %s; want 0 and a record at %s", r.code, r.stderr, a)
	}
	if r := run("forget", "--path", b); r.code != 0 || r.stdout != "no success recorded at "+b+"\n" {
		t.Errorf("forget of the second path alone: exit %d, stdout %q", r.code, r.stdout)
	}
	r := run("forget", "--path", b, "--path", a)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "forgot the last success at "+a+": ") || !recordAt(t, conn, a).IsZero() {
		t.Fatalf("forget: exit %d, stdout %q, stderr %q; want the record at %s forgotten", r.code, r.stdout, r.stderr, a)
	}
	if r := run(job...); r.code != 0 || lines(runs) != 2 {
		t.Errorf("run after forget: exit %d, %d runs; want 0 and 2", r.code, lines(runs))
	}
	if err := conn.Delete(a+"/"+success.NodeName, -1); err != nil {
		t.Fatal(err)
	}
	assertGone(t, conn, root)
}

// TestForgetRefused: a client whom the lock path's ACL does not let delete
// in it is refused with 77 and one line naming that ACL; the record stays.
func TestForgetRefused(t *testing.T) {
	path := lockPath(t)
	conn := userConn(t, "owner")
	createParents(t, conn, path)
	if _, err := conn.Create(path, nil, 0, append(zk.DigestACL(zk.PermAll, "owner", "pw"), zk.WorldACL(zk.PermRead)...)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(path+"/"+success.NodeName, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Delete(path+"/"+success.NodeName, -1)
		conn.Delete(path, -1)
	})
	c := zklock(t, "forget", "--path", path)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	code := zktest.ExitCodeT(t, c.Run())
	want := "the ACL of " + path + " does not let this client delete nodes in it"
	if code != 77 || !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 77 and %q", code, stdout.String(), stderr.String(), want)
	}
	if recordAt(t, conn, path).IsZero() {
		t.Error("the record is gone after a refused forget")
	}
}
