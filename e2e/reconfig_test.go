package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestReconfigMigration: ZooKeeper moves to new hosts under a holder and a
// waiter whose connect string names only the old ones. Two new members
// join with reconfig -add; then each original member is removed with
// reconfig -remove and stopped, one by one. zklock follows
// /zookeeper/config, so it reconnects to the new members: the holder
// keeps its lock to the end and exits 0, the waiter then runs, and the
// overlap detector never fires. A zklock started afterwards with the stale
// connect string cannot connect (exit 69), and doctor names the members
// missing from it.
func TestReconfigMigration(t *testing.T) {
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c, err := zktest.StartEnsemble(ctx, 3, zktest.Options{Reconfig: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	originals := c.Servers()
	stale := c.ConnectString()

	dir := t.TempDir()
	path := zktest.TestPath(t, "/reconfig")
	run := []string{"--servers", stale, "run", "--path", path, "--"}
	holder := zklock(t, append(run, guarded(dir, `echo "$ZKLOCK_SESSION_ID" > "$D/session"; touch "$D/started"; while [ ! -e "$D/release" ]; do sleep 0.05; done; echo held`)...)...)
	holder.Env = append(holder.Env, "D="+dir)
	waiter := zklock(t, append(run, guarded(dir, `echo ran`)...)...)
	holders := make(chan result, 2)
	go func() { holders <- runResult(holder, 4*time.Minute) }()
	zktest.Eventually(t, 30*time.Second, "the holder to start its command", func() bool {
		return fileExists(filepath.Join(dir, "started"))
	})
	waiters := make(chan result, 1)
	go func() { waiters <- runResult(waiter, 4*time.Minute) }()
	conn := zktest.DialT(t, c.Addrs())
	zktest.Eventually(t, 30*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })
	conn.Close()

	var joined []*zktest.Server
	for range 2 {
		s, err := c.Join(ctx)
		if err != nil {
			t.Fatal(err)
		}
		joined = append(joined, s)
	}
	// doctor names the members the connect string lacks, with the line
	// that names them all.
	code, out, _ := doctor(t, "--servers", stale)
	if code != 0 {
		t.Errorf("doctor with the members added: exit %d, want 0 (a warning fails nothing)", code)
	}
	for _, s := range joined {
		line(t, out, "warn", "members", fmt.Sprintf("server.%d at %s", s.ID(), s.Addr()))
	}
	line(t, out, "warn", "members", fmt.Sprintf("servers = %q", stale+","+joined[0].Addr()+","+joined[1].Addr()))
	for _, s := range originals {
		if err := c.Leave(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	members, err := c.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("members after the migration: %v", members)
	// The holder's session lives on, on a new member: without following
	// the membership it would dial the stopped hosts until it expired.
	b, err := os.ReadFile(filepath.Join(dir, "session"))
	if err != nil {
		t.Fatal(err)
	}
	session := strings.TrimSpace(string(b))
	zktest.Eventually(t, time.Minute, "the holder's session on a new member", func() bool {
		for _, s := range joined {
			if out, err := zktest.Cons(t.Context(), s.Addr()); err == nil && strings.Contains(out, "sid="+session+",") {
				return true
			}
		}
		return false
	})

	// A new zklock with only the old hosts finds no server.
	r := runWithin(t, time.Minute, zklock(t, "--servers", stale, "--connect-timeout", "3s", "run", "--path", path, "--", "true"))
	if r.code != 69 {
		t.Errorf("with the stale connect string: exit %d, want 69; stderr %q", r.code, r.stderr)
	}
	if code, _, _ := doctor(t, "--servers", stale, "--connect-timeout", "3s"); code != 69 {
		t.Errorf("doctor with the stale connect string: exit %d, want 69", code)
	}

	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := <-holders
	if h.code != 0 || h.stdout != "held\n" {
		t.Errorf("holder: exit %d, stdout %q, stderr %q; want 0 and held", h.code, h.stdout, h.stderr)
	}
	w := <-waiters
	if w.code != 0 || w.stdout != "ran\n" {
		t.Errorf("waiter: exit %d, stdout %q, stderr %q; want 0 and ran", w.code, w.stdout, w.stderr)
	}
	if h.code == overlapExit || w.code == overlapExit {
		t.Errorf("the overlap detector fired")
	}
}
