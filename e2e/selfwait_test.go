package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
