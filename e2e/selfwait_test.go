package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestReentryThroughChroot: the inner zklock names the outer's lock
// through another chroot of the same ensemble, either way round. It is
// one node on the server, so the inner one re-enters, instead of queueing
// behind its own ancestor forever.
func TestReentryThroughChroot(t *testing.T) {
	s := server(t).ConnectString()
	for _, tc := range []struct {
		name                  string
		outerServers, outerAt string
		innerServers, innerAt string
	}{
		{"inner chrooted", s, "/x", s + "%s", "/x"},
		{"outer chrooted", s + "%s", "/x", s, "%s/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := lockPath(t)
			f := func(v string) string { return strings.ReplaceAll(v, "%s", base) }
			outerAt := tc.outerAt
			if tc.outerServers == s {
				outerAt = base + tc.outerAt
			}
			dir := t.TempDir()
			c := zklock(t, "--servers", f(tc.outerServers), "run", "--path", f(outerAt), "--",
				"sh", "-c", `zklock -v --servers "$S" run --path "$P" -- sh -c 'echo "$ZKLOCK_NODE" > "$D/inner"'`)
			c.Env = append(c.Env, "S="+f(tc.innerServers), "P="+f(tc.innerAt), "D="+dir)
			r := runWithin(t, 30*time.Second, c)
			if r.code != 0 || !strings.Contains(r.stderr, "re-entered") {
				t.Errorf("exit %d, want 0 and the inner zklock re-entered; stderr: %s", r.code, r.stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "inner")); len(b) == 0 {
				t.Error("the inner command did not run")
			}
			assertGone(t, rawZK(t), base+"/x")
		})
	}
}

// TestSelfWaitDroppedEnvironment: the environment is dropped between a
// holder and a zklock its command starts (env -i), so ZKLOCK_HELD does not
// arrive. The inner zklock finds its own ancestor holding the lock it
// asks for, and exits 64 at once with one line that names the ancestor
// and the way out, instead of waiting, silently, forever.
func TestSelfWaitDroppedEnvironment(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	for _, tc := range []struct{ outer, inner string }{
		{"", ""},
		{"--shared", ""}, // an exclusive request behind a shared hold waits too
		{"", "--shared"},
	} {
		inner := `env -i PATH="$PATH" zklock --servers "$S" run ` + tc.inner + ` --timeout 60s --path "$P" -- touch "$D/ran" 2> "$D/err"; echo $? > "$D/code"`
		os.Remove(filepath.Join(dir, "code"))
		args := []string{"run"}
		if tc.outer != "" {
			args = append(args, tc.outer)
		}
		c := zklock(t, append(args, "--path", path, "--", "sh", "-c", inner)...)
		c.Env = append(c.Env, "S="+server(t).ConnectString(), "P="+path, "D="+dir)
		start := time.Now()
		r := runWithin(t, 45*time.Second, c)
		code, _ := os.ReadFile(filepath.Join(dir, "code"))
		msg, _ := os.ReadFile(filepath.Join(dir, "err"))
		t.Logf("outer %q, inner %q: %s after %s", tc.outer, tc.inner, msg, time.Since(start).Round(time.Millisecond))
		if r.code != 0 || strings.TrimSpace(string(code)) != "64" || strings.Count(string(msg), "\n") != 1 ||
			!strings.Contains(string(msg), fmt.Sprintf("held by zklock pid %d", c.Process.Pid)) ||
			!strings.Contains(string(msg), "--preserve-env=ZKLOCK_HELD,ZKLOCK_PID") {
			t.Errorf("outer %q, inner %q: outer exit %d, inner exit %s, want 64 and one line naming pid %d and the way out: %s",
				tc.outer, tc.inner, r.code, code, c.Process.Pid, msg)
		}
		if fileExists(filepath.Join(dir, "ran")) {
			t.Fatal("the inner command ran beside its ancestor's")
		}
		assertGone(t, rawZK(t), path)
	}
}

// TestSelfWaitOtherPIDNamespace: a pid names a process only within its
// PID namespace. Two containers on one host (host networking shares the
// host name) lay their processes out alike, so the holder of a lock in
// one may have the pid of an ancestor zklock in the other. The inner
// zklock there (its environment dropped) must wait for that holder, which
// ends, not exit 64 as if its own ancestor held the lock.
func TestSelfWaitOtherPIDNamespace(t *testing.T) {
	s := server(t).ConnectString()
	x, y := lockPath(t), lockPath(t)
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	// A PID namespace of its own (in a user namespace, so that no
	// privilege is needed), its /proc mounted, and sh as its pid 1: the
	// zklock sh starts is pid 2 in each.
	ns := func(script string) *exec.Cmd {
		c := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc",
			"sh", "-c", script+"; true")
		c.Env = append(os.Environ(), "S="+s, "X="+x, "Y="+y, "D="+dir)
		return c
	}
	// B: its zklock holds Y; its command, once told to go, starts a zklock
	// that asks for X without the environment that says what it holds.
	b := ns(`zklock --servers "$S" run --path "$Y" -- sh -c '
		echo $PPID > "$D/b-pid"
		while [ ! -e "$D/go" ]; do sleep 0.05; done
		env -i PATH="$PATH" zklock --servers "$S" run --timeout 30s --path "$X" -- touch "$D/ran" 2> "$D/err"
		echo $? > "$D/code"'`)
	var bOut zktest.SyncBuffer
	b.Stdout, b.Stderr = &bOut, &bOut
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}) // closed once B has ended
	go func() {
		b.Wait()
		close(done)
	}()
	defer func() {
		b.Process.Kill() // its namespace with it (--kill-child)
		<-done
	}()
	// The shell creates the file before echo writes to it: wait for the
	// whole line.
	written := func(name string) bool {
		b, err := os.ReadFile(at(name))
		return err == nil && strings.HasSuffix(string(b), "\n")
	}
	zktest.Eventually(t, 20*time.Second, "B holds its lock", func() bool {
		select {
		case <-done:
			// unshare refuses a user namespace inside a chroot, for one.
			t.Fatalf("B ended before it held its lock: %s", bOut.String())
		default:
		}
		return written("b-pid")
	})
	// A: its zklock, started after B's, holds X for a while.
	a := ns(`zklock --servers "$S" run --path "$X" -- sh -c 'echo $PPID > "$D/a-pid"; sleep 3'`)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 20*time.Second, "A holds X", func() bool { return written("a-pid") })
	aPID, _ := os.ReadFile(at("a-pid"))
	bPID, _ := os.ReadFile(at("b-pid"))
	if string(aPID) != string(bPID) {
		t.Fatalf("the zklocks have pids %q and %q in their namespaces: not the same, so this proves nothing", aPID, bPID)
	}
	if err := os.WriteFile(at("go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("A: %v", err)
	}
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("B still runs 40s after A released")
	}
	code, _ := os.ReadFile(at("code"))
	msg, _ := os.ReadFile(at("err"))
	if strings.TrimSpace(string(code)) != "0" || !fileExists(at("ran")) {
		t.Errorf("the inner zklock exited %s, want 0 once A released; stderr: %s", code, msg)
	}
	assertGone(t, rawZK(t), x)
}
