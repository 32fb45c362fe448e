package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// children lists a lock path's children, none if it does not exist.
func children(t *testing.T, conn *zk.Conn, path string) []string {
	t.Helper()
	ch, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestReentrantNested: a zklock run or tryrun inside the command of a
// zklock holding the same path runs at once, under the outer node, and
// creates no node of its own.
func TestReentrantNested(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	// The inner command waits for the test's go-ahead, so that the queue
	// can be looked at while both zklocks run.
	inner := `echo "$ZKLOCK_NODE" > "$D/inner-node.$1"; touch "$D/inside.$1"; while [ ! -e "$D/go.$1" ]; do sleep 0.02; done`
	outer := `echo "$ZKLOCK_NODE" > "$D/outer-node"
zklock -v run --path "$P" -- sh -c "$INNER" sh run || exit 10
zklock -v tryrun --path "$P" -- sh -c "$INNER" sh tryrun || exit 11
zklock -v run --shared --path "$P" -- sh -c "$INNER" sh shared || exit 12`
	c := zklock(t, "run", "--path", path, "--", "sh", "-c", outer)
	c.Env = append(c.Env, "D="+dir, "P="+path, "INNER="+inner)
	done := make(chan result, 1)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := c.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		done <- result{out.String(), errb.String(), code}
	}()
	t.Cleanup(func() { c.Process.Kill() })
	for _, step := range []string{"run", "tryrun", "shared"} {
		zktest.Eventually(t, 15*time.Second, "the inner "+step+" to start its command", func() bool { return fileExists(filepath.Join(dir, "inside."+step)) })
		if ch := children(t, conn, path); len(ch) != 1 {
			t.Errorf("%s: the queue holds %v while nested, want the outer node alone", step, ch)
		}
		if err := os.WriteFile(filepath.Join(dir, "go."+step), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the outer zklock did not finish")
	}
	if r.code != 0 {
		t.Fatalf("outer exit %d; stderr: %s", r.code, r.stderr)
	}
	outerNode, _ := os.ReadFile(filepath.Join(dir, "outer-node"))
	for _, step := range []string{"run", "tryrun", "shared"} {
		got, _ := os.ReadFile(filepath.Join(dir, "inner-node."+step))
		if len(outerNode) == 0 || !bytes.Equal(got, outerNode) {
			t.Errorf("%s: inner ZKLOCK_NODE %q, want the outer's %q", step, got, outerNode)
		}
	}
	if n := strings.Count(r.stderr, "re-entered "+path); n != 3 {
		t.Errorf("-v said \"re-entered\" %d times, want 3; stderr: %s", n, r.stderr)
	}
	assertGone(t, conn, path)
}

// TestReentrantSeveralPaths: inside a holder of /a, a zklock asking for /a
// and /b takes only /b, and its command sees both, /a under the outer node.
// Another job cannot take /b meanwhile.
func TestReentrantSeveralPaths(t *testing.T) {
	base := lockPath(t)
	a, b := base+"/a", base+"/b"
	conn := rawZK(t)
	dir := t.TempDir()
	inner := `echo "$ZKLOCK_NODES" > "$D/nodes"; echo "$ZKLOCK_PATHS" > "$D/paths"; echo "$ZKLOCK_HELD" > "$D/held"
touch "$D/inside"; while [ ! -e "$D/go" ]; do sleep 0.02; done`
	outer := `echo "$ZKLOCK_NODE" > "$D/outer-node"; zklock run --path "$B" --path "$A" -- sh -c "$INNER"`
	c := zklock(t, "run", "--path", a, "--", "sh", "-c", outer)
	c.Env = append(c.Env, "D="+dir, "A="+a, "B="+b, "INNER="+inner)
	errc := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { errc <- c.Wait() }()
	t.Cleanup(func() { c.Process.Kill() })
	zktest.Eventually(t, 15*time.Second, "the inner command to start", func() bool { return fileExists(filepath.Join(dir, "inside")) })
	if ch := children(t, conn, a); len(ch) != 1 {
		t.Errorf("%s holds %v, want the outer node alone", a, ch)
	}
	if ch := children(t, conn, b); len(ch) != 1 {
		t.Errorf("%s holds %v, want the inner node alone", b, ch)
	}
	if r := runWithin(t, 15*time.Second, zklock(t, "tryrun", "--path", b, "--", "true")); r.code != 75 {
		t.Errorf("tryrun %s while the inner zklock holds it: exit %d, want 75; stderr: %s", b, r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("outer: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the outer zklock did not finish")
	}
	outerNode, _ := os.ReadFile(filepath.Join(dir, "outer-node"))
	nodes, _ := os.ReadFile(filepath.Join(dir, "nodes"))
	paths, _ := os.ReadFile(filepath.Join(dir, "paths"))
	held, _ := os.ReadFile(filepath.Join(dir, "held"))
	ns := strings.Fields(string(nodes))
	if len(ns) != 2 || ns[0] != strings.TrimSpace(string(outerNode)) || !strings.HasPrefix(ns[1], b+"/") {
		t.Errorf("inner ZKLOCK_NODES %q, want the outer's %s then a node of %s", nodes, outerNode, b)
	}
	if got := strings.TrimSpace(string(paths)); got != a+" "+b {
		t.Errorf("inner ZKLOCK_PATHS %q, want %q", got, a+" "+b)
	}
	if hs := strings.Fields(string(held)); len(hs) != 2 || !strings.HasPrefix(hs[0], "exclusive:0x") || !strings.HasPrefix(hs[1], "exclusive:0x") {
		t.Errorf("inner ZKLOCK_HELD %q, want two exclusive entries", held)
	}
	assertGone(t, conn, a)
	assertGone(t, conn, b)
}

// TestReentryStaleEnvironment: an environment that names a lock this
// process does not inherit never grants it. While a holder holds the path,
// its own ZKLOCK_HELD copied into an unrelated process (whose ancestry
// does not include the holder), and an entry naming an ancestor but a node
// gone, a session that does not own it, or the holder's node (as when the
// holder's pid on another host is an ancestor's pid here), all take the
// normal path: tryrun finds the lock busy.
func TestReentryStaleEnvironment(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	h := zklock(t, "run", "--path", path, "--", "sh", "-c", `printf %s "$ZKLOCK_HELD" > "$D/held.tmp"; mv "$D/held.tmp" "$D/held"; while :; do sleep 0.05; done`)
	h.Env = append(h.Env, "D="+dir)
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Process.Signal(syscall.SIGTERM)
		h.Wait()
	})
	zktest.Eventually(t, 15*time.Second, "the holder to hold", func() bool { return fileExists(filepath.Join(dir, "held")) })
	b, _ := os.ReadFile(filepath.Join(dir, "held"))
	entry := string(b)
	f := strings.SplitN(entry, ":", 4)
	if len(f) != 4 || f[0] != "exclusive" || f[2] != strconv.Itoa(h.Process.Pid) {
		t.Fatalf("ZKLOCK_HELD %q, want exclusive:SESSION:%d:NODE", entry, h.Process.Pid)
	}
	me := strconv.Itoa(os.Getpid()) // an ancestor of every zklock started here
	for _, tc := range []struct {
		what, held, says string
	}{
		{"copied from the holder", entry, "not an ancestor"},
		{"another session", strings.Join([]string{f[0], "0x1", me, f[3]}, ":"), "no longer belongs"},
		// Pids coincide across hosts and containers: the holder's own
		// entry, its pid replaced by an ancestor's.
		{"another holder's node under an ancestor's pid", strings.Join([]string{f[0], f[1], me, f[3]}, ":"), "not written by zklock pid"},
		{"a node that is gone", strings.Join([]string{f[0], f[1], me, path + "/_c_00000000-0000-0000-0000-000000000000-lock-0000000099"}, ":"), "no longer belongs"},
	} {
		c := zklock(t, "-v", "tryrun", "--path", path, "--", "true")
		c.Env = append(c.Env, "ZKLOCK_HELD="+tc.held)
		r := runWithin(t, 15*time.Second, c)
		if r.code != 75 || !strings.Contains(r.stderr, tc.says) || strings.Contains(r.stderr, "re-entered") {
			t.Errorf("%s: exit %d, want 75 and a line saying %q; stderr: %s", tc.what, r.code, tc.says, r.stderr)
		}
	}
	if ch := children(t, conn, path); len(ch) != 1 {
		t.Errorf("the queue holds %v after the refused runs, want the holder alone", ch)
	}
	h.Process.Signal(syscall.SIGTERM)
	h.Wait()
	// Once the holder has gone, the same entry (naming an ancestor, so only
	// the server's answer can refuse it) takes the lock normally.
	c := zklock(t, "-v", "tryrun", "--path", path, "--", "true")
	c.Env = append(c.Env, "ZKLOCK_HELD="+strings.Join([]string{f[0], f[1], me, f[3]}, ":"))
	if r := runWithin(t, 15*time.Second, c); r.code != 0 || !strings.Contains(r.stderr, "no longer belongs") || !strings.Contains(r.stderr, "acquired "+path) {
		t.Errorf("after the holder left: exit %d, want 0 with its own node; stderr: %s", r.code, r.stderr)
	}
	assertGone(t, conn, path)
}

// TestReentrySharedIsNotExclusive: inside a shared hold, an exclusive
// request is refused at once with 64 (waiting would never end), while a
// shared one re-enters.
func TestReentrySharedIsNotExclusive(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	outer := `zklock run --path "$P" -- true 2> "$D/err"; echo $? > "$D/code"
zklock tryrun --shared --path "$P" -- true; echo $? > "$D/shared"`
	c := zklock(t, "run", "--shared", "--path", path, "--", "sh", "-c", outer)
	c.Env = append(c.Env, "D="+dir, "P="+path)
	if r := runWithin(t, 30*time.Second, c); r.code != 0 {
		t.Fatalf("outer exit %d; stderr: %s", r.code, r.stderr)
	}
	code, _ := os.ReadFile(filepath.Join(dir, "code"))
	msg, _ := os.ReadFile(filepath.Join(dir, "err"))
	shared, _ := os.ReadFile(filepath.Join(dir, "shared"))
	if strings.TrimSpace(string(code)) != "64" || !strings.Contains(string(msg), "is held shared by zklock pid") {
		t.Errorf("exclusive inside shared: exit %s, message %q; want 64 naming the shared hold", code, msg)
	}
	if strings.TrimSpace(string(shared)) != "0" {
		t.Errorf("shared inside shared: exit %s, want 0", shared)
	}
	assertGone(t, conn, path)
}

// TestSelfLockingScript: a script that re-runs itself under zklock unless
// its parent is the zklock holding its path runs under the lock however it
// is started: alone (its own node), below a holder of the path (re-entered,
// no node of its own), and as the command of a zklock holding another path
// (its own node).
func TestSelfLockingScript(t *testing.T) {
	path, other := lockPath(t)+"/job", lockPath(t)+"/other"
	conn := rawZK(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "job.sh")
	body := `#!/bin/sh
[ "$ZKLOCK_PID:$ZKLOCK_PATH" = "$PPID:` + path + `" ] || exec zklock run --path ` + path + ` -- "$0" "$@"
echo "$1 $ZKLOCK_NODE" >> "$D/ran"
touch "$D/inside.$1"; while [ ! -e "$D/go.$1" ]; do sleep 0.02; done
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		how   string
		argv  []string
		nodes int // in the job's lock path while the script runs
	}{
		{"alone", []string{script, "alone"}, 1},
		{"below-holder", []string{"zklock", "run", "--path", path, "--", "sh", "-c", `"$S" below-holder; exit $?`}, 1},
		{"other-path", []string{"zklock", "run", "--path", other, "--", script, "other-path"}, 1},
	} {
		var c *exec.Cmd
		if tc.argv[0] == "zklock" {
			c = zklock(t, tc.argv[1:]...)
		} else {
			c = zklock(t)
			c.Path, c.Args = tc.argv[0], tc.argv
		}
		c.Env = append(c.Env, "D="+dir, "S="+script)
		errc := make(chan error, 1)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { errc <- c.Wait() }()
		zktest.Eventually(t, 15*time.Second, tc.how+": the script to run", func() bool { return fileExists(filepath.Join(dir, "inside."+tc.how)) })
		if ch := children(t, conn, path); len(ch) != tc.nodes {
			t.Errorf("%s: %s holds %v while the script runs, want %d node", tc.how, path, ch, tc.nodes)
		}
		if err := os.WriteFile(filepath.Join(dir, "go."+tc.how), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("%s: %v", tc.how, err)
			}
		case <-time.After(30 * time.Second):
			c.Process.Kill()
			t.Fatalf("%s: the script did not finish", tc.how)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ran"))
	if strings.Count(string(b), " "+path+"/") != 3 {
		t.Errorf("runs and their nodes: %q; want 3 runs, each under a node of %s", b, path)
	}
	assertGone(t, conn, path)
	assertGone(t, conn, other)
}

// TestReentrantLoss: when the ancestor loses the lock, the re-entered
// command is stopped with it, though it runs in a process group of its
// own: the ancestor stops its command's group, the inner zklock in it, which
// passes the signal on (and its watchdog kills its command's group if the
// inner zklock is killed first).
func TestReentrantLoss(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	inner := `echo $$ > "$D/pid"; trap '' TERM; while :; do sleep 0.05; done`
	c := zklock(t, "run", "--kill-grace", "200ms", "--path", path, "--", "sh", "-c", `zklock run --path "$P" -- sh -c "$INNER"`)
	c.Env = append(c.Env, "D="+dir, "P="+path, "INNER="+inner)
	errc := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { errc <- c.Wait() }()
	t.Cleanup(func() { c.Process.Kill() })
	pid, err := strconv.Atoi(waitLine(t, filepath.Join(dir, "pid"), 15*time.Second, "the re-entered command to start"))
	if err != nil {
		t.Fatal(err)
	}
	ch := children(t, conn, path)
	if len(ch) != 1 {
		t.Fatalf("the queue holds %v, want the outer node alone", ch)
	}
	if err := conn.Delete(path+"/"+ch[0], -1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 76 {
			t.Errorf("outer: %v, want exit 76", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the outer zklock did not stop")
	}
	zktest.Eventually(t, 10*time.Second, "the re-entered command to be dead", func() bool { return !zktest.ProcessAlive(pid) })
	assertGone(t, conn, path)
}

// TestReentrantSemaphore: a lease covers a request for a lease of the same
// semaphore (the same limit), which re-enters without a lease of its own;
// another limit takes the normal path, which refuses the mismatch.
func TestReentrantSemaphore(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	outer := `zklock -v run --limit 2 --path "$P" -- true 2> "$D/err"; echo $? > "$D/same"
zklock run --limit 3 --path "$P" -- true 2> "$D/err3"; echo $? > "$D/other"`
	c := zklock(t, "run", "--limit", "2", "--path", path, "--", "sh", "-c", outer)
	c.Env = append(c.Env, "D="+dir, "P="+path)
	if r := runWithin(t, 30*time.Second, c); r.code != 0 {
		t.Fatalf("outer exit %d; stderr: %s", r.code, r.stderr)
	}
	same, _ := os.ReadFile(filepath.Join(dir, "same"))
	errs, _ := os.ReadFile(filepath.Join(dir, "err"))
	other, _ := os.ReadFile(filepath.Join(dir, "other"))
	errs3, _ := os.ReadFile(filepath.Join(dir, "err3"))
	if strings.TrimSpace(string(same)) != "0" || !strings.Contains(string(errs), "re-entered "+path+": held limit=2") || strings.Contains(string(errs), "acquired") {
		t.Errorf("--limit 2 inside --limit 2: exit %s; stderr %s; want 0, re-entered, no lease of its own", same, errs)
	}
	if strings.TrimSpace(string(other)) != "64" || !strings.Contains(string(errs3), "limit") {
		t.Errorf("--limit 3 inside --limit 2: exit %s; stderr %s; want 64 naming the limit", other, errs3)
	}
	assertGone(t, conn, path)
}

// TestReentryForgedMode: ZKLOCK_HELD only points at a node; the node
// decides the mode. An entry whose mode was rewritten is read with the
// node's: exclusive inside a shared node exits 64 rather than running
// beside the other readers, and --limit 3 inside a lease of a semaphore of
// 2 takes the normal path, which refuses the mismatch.
func TestReentryForgedMode(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	forge := `F=$(printf %s "$ZKLOCK_HELD" | sed "s/^$FROM:/$TO:/"); ZKLOCK_HELD=$F zklock -v tryrun $INNER --path "$P" -- true 2> "$D/err"; echo $? > "$D/code"`
	for _, tc := range []struct {
		outer, from, to, inner, code, says string
	}{
		{"--shared", "shared", "exclusive", "", "64", "is held shared"},
		{"--limit=2", "limit=2", "limit=3", "--limit=3", "64", "limit"},
	} {
		os.Remove(filepath.Join(dir, "code"))
		c := zklock(t, "run", tc.outer, "--path", path, "--", "sh", "-c", forge)
		c.Env = append(c.Env, "D="+dir, "P="+path, "FROM="+tc.from, "TO="+tc.to, "INNER="+tc.inner)
		if r := runWithin(t, 30*time.Second, c); r.code != 0 {
			t.Fatalf("outer %s: exit %d; stderr: %s", tc.outer, r.code, r.stderr)
		}
		code, _ := os.ReadFile(filepath.Join(dir, "code"))
		msg, _ := os.ReadFile(filepath.Join(dir, "err"))
		if strings.TrimSpace(string(code)) != tc.code || !strings.Contains(string(msg), tc.says) || strings.Contains(string(msg), "re-entered") {
			t.Errorf("%s rewritten as %s inside %s: exit %s, want %s saying %q; stderr: %s", tc.from, tc.to, tc.outer, code, tc.code, tc.says, msg)
		}
	}
	assertGone(t, conn, path)
}

// TestReentrantInBackground: a re-entered zklock left running in the
// background when its ancestor's command exits loses its lock with the
// ancestor's release: it stops its command and exits 76, instead of
// running on under a lock that the next job already holds.
func TestReentrantInBackground(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	dir := t.TempDir()
	inner := `echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"; i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done`
	outer := `(zklock run --kill-grace 200ms --path "$P" -- sh -c "$INNER" 2> "$D/err"; echo $? > "$D/code") > /dev/null 2>&1 &
while [ ! -e "$D/pid" ]; do sleep 0.02; done`
	c := zklock(t, "run", "--path", path, "--", "sh", "-c", outer)
	c.Env = append(c.Env, "D="+dir, "P="+path, "INNER="+inner)
	if r := runWithin(t, 30*time.Second, c); r.code != 0 {
		t.Fatalf("outer exit %d; stderr: %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pid"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	zktest.Eventually(t, 10*time.Second, "the background re-entered command to be stopped", func() bool { return !zktest.ProcessAlive(pid) })
	code := waitLine(t, filepath.Join(dir, "code"), 10*time.Second, "the background zklock to exit")
	msg, _ := os.ReadFile(filepath.Join(dir, "err"))
	if code != "76" || !strings.Contains(string(msg), "lock node deleted") {
		t.Errorf("background re-entered zklock: exit %s, want 76 naming the deleted node; stderr: %s", code, msg)
	}
	assertGone(t, conn, path)
}
