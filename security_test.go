package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
)

// authFile writes credentials to a file with the given mode.
func authFile(t *testing.T, cred string, mode os.FileMode) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "zk-auth")
	if err := os.WriteFile(name, []byte(cred+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestAuthFileHidesPassword: with --auth-file, the password is nowhere that
// another user or a log could see it: not in ps or /proc/PID/cmdline, not in
// -v output, not in the lock node's data, not in the command's environment.
// The credentials are really used: the node's ACL names the user.
func TestAuthFileHidesPassword(t *testing.T) {
	path := lockPath(t)
	secret := fmt.Sprintf("pw-%d-not-visible", time.Now().UnixNano())
	file := authFile(t, "digest:alice:"+secret, 0o600)
	dir := t.TempDir()
	h := zklock(t, "-v", "--auth-file", file, "run", "--path", path, "--",
		"sh", "-c", `env > "$1/env"; touch "$1/held"; while :; do sleep 0.05; done`, "sh", dir)
	// ZKLOCK_AUTH is set too, but the flag wins; the command must not see it.
	h.Env = append(h.Env, "ZKLOCK_AUTH=digest:mallory:"+secret)
	var stderr bytes.Buffer
	h.Stderr = &stderr
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { h.Process.Signal(syscall.SIGTERM); h.Wait() }()
	waitFor(t, 10*time.Second, "the holder to hold", func() bool {
		_, err := os.Stat(filepath.Join(dir, "held"))
		return err == nil
	})

	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", h.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cmdline, []byte("--auth-file")) || bytes.Contains(cmdline, []byte(secret)) {
		t.Errorf("/proc/%d/cmdline = %q", h.Process.Pid, cmdline)
	}
	ps, err := exec.Command("ps", "-eww", "-o", "pid=,args=").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ps, []byte(fmt.Sprintf("%d %s", h.Process.Pid, h.Path))) {
		t.Errorf("ps does not show zklock (pid %d):\n%s", h.Process.Pid, ps)
	}
	if bytes.Contains(ps, []byte(secret)) {
		t.Errorf("ps shows the password:\n%s", ps)
	}
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte("ZKLOCK_AUTH=")) || bytes.Contains(env, []byte(secret)) {
		t.Errorf("the command inherited the credentials:\n%s", env)
	}

	conn := rawZK(t)
	children, _, err := conn.Children(path)
	if err != nil || len(children) != 1 {
		t.Fatalf("children of %s: %v, %v", path, children, err)
	}
	data, _, err := conn.Get(path + "/" + children[0])
	if err != nil || bytes.Contains(data, []byte(secret)) || !bytes.Contains(data, []byte(`"zklock"`)) {
		t.Errorf("node data %q, %v", data, err)
	}
	acl, _, err := conn.GetACL(path + "/" + children[0])
	if err != nil || len(acl) == 0 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "alice:") {
		t.Errorf("node ACL %+v, %v: want alice's digest", acl, err)
	}

	h.Process.Signal(syscall.SIGTERM)
	h.Wait()
	if !strings.Contains(stderr.String(), "acquired") || strings.Contains(stderr.String(), secret) {
		t.Errorf("-v output:\n%s", stderr.String())
	}
}

// TestAuthFileModeRefused: a credentials file that others can read has
// leaked already; zklock refuses it with exit 64, names the file and the
// fix, not the password, and leaves nothing in ZooKeeper.
func TestAuthFileModeRefused(t *testing.T) {
	path := lockPath(t)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		file := authFile(t, "digest:alice:leaked-pw", mode)
		c := zklock(t, "--auth-file", file, "run", "--path", path, "--", "true")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		code := zktest.ExitCodeT(t, c.Run())
		want := fmt.Sprintf("zklock: bad auth: auth file %s is accessible by group or others (mode %04o); run chmod 600 %s (see zklock --help)\n", file, mode, file)
		if code != 64 || stderr.String() != want {
			t.Errorf("mode %04o: exit %d, stderr %q; want 64, %q", mode, code, stderr.String(), want)
		}
	}
	if ok, _, err := rawZK(t).Exists(path); err != nil || ok {
		t.Errorf("%s exists (%v) after refusals", path, err)
	}
}
