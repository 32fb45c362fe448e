package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
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
	zktest.Eventually(t, 10*time.Second, "the holder to hold", func() bool {
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
// fix, not the password, and leaves nothing in ZooKeeper. Its group may
// read it only when root owns it (as with Debian's ssl-cert keys): a file
// of another user's at 0640 is refused.
func TestAuthFileModeRefused(t *testing.T) {
	path := lockPath(t)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o660, 0o604, 0o620} {
		file := authFile(t, "digest:alice:leaked-pw", mode)
		if mode == 0o640 {
			disown(t, file)
		}
		c := zklock(t, "--auth-file", file, "run", "--path", path, "--", "true")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		code := zktest.ExitCodeT(t, c.Run())
		want := fmt.Sprintf("zklock: bad auth: auth file %s is accessible by group or others (mode %04o); run chmod 600 %s (see zklock run --help)\n", file, mode, file)
		if code != 64 || stderr.String() != want {
			t.Errorf("mode %04o: exit %d, stderr %q; want 64, %q", mode, code, stderr.String(), want)
		}
	}
	if ok, _, err := rawZK(t).Exists(path); err != nil || ok {
		t.Errorf("%s exists (%v) after refusals", path, err)
	}
	if os.Geteuid() == 0 {
		// Owned by root and readable by its group: accepted.
		file := authFile(t, "digest:alice:shared-pw", 0o640)
		if out, err := zklock(t, "--auth-file", file, "run", "--path", path, "--", "true").CombinedOutput(); err != nil {
			t.Errorf("root's 0640 auth file: %v\n%s", err, out)
		}
	}
}

// disown gives name to a user other than the one running the tests, when
// they run as root; otherwise the file is the test user's, not root's,
// already.
func disown(t *testing.T, name string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(name, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}

// TestAuthFileNameNotEchoed: credentials given where the auth file's name
// belongs (--auth-file, ZKLOCK_AUTH_FILE, auth_file in a config file) are
// never echoed as a file name; a FIFO given as the auth file is refused at
// once instead of blocking the open. Both exit 64 and create nothing.
func TestAuthFileNameNotEchoed(t *testing.T) {
	path := lockPath(t)
	secret := "digest:alice:s3cret-pw"
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("auth_file = %q\n", secret)), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		args []string
		env  string
		says string
	}{
		{"--auth-file", []string{"--auth-file", secret}, "", "has the form digest:user:password"},
		{"ZKLOCK_AUTH_FILE", nil, "ZKLOCK_AUTH_FILE=" + secret, "has the form digest:user:password"},
		{"auth_file", nil, "ZKLOCK_CONFIG=" + conf, "has the form digest:user:password"},
		{"a FIFO", []string{"--auth-file", fifo}, "", "is not a regular file"},
	} {
		c := zklock(t, append(tc.args, "run", "--path", path, "--", "true")...)
		if tc.env != "" {
			c.Env = append(c.Env, tc.env)
		}
		r := runWithin(t, 15*time.Second, c)
		if r.code != 64 || strings.Contains(r.stderr, "s3cret") || !strings.Contains(r.stderr, tc.says) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 64 and one line saying %q, without the password", tc.what, r.code, r.stderr, tc.says)
		}
	}
	c := zklock(t, "config")
	c.Env = append(c.Env, "ZKLOCK_CONFIG="+conf)
	if r := runWithin(t, 15*time.Second, c); r.code != 0 || strings.Contains(r.stdout, "s3cret") || !strings.Contains(r.stdout, "digest:alice:********") {
		t.Errorf("zklock config: exit %d, stdout %q; want the auth_file value masked", r.code, r.stdout)
	}
	if ok, _, err := rawZK(t).Exists(path); err != nil || ok {
		t.Errorf("%s exists (%v) after refusals", path, err)
	}
}

// createParents creates path's missing ancestors as containers, which the
// server reaps once the test's nodes are gone.
func createParents(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	p := ""
	parts := strings.Split(path[1:], "/")
	for _, part := range parts[:len(parts)-1] {
		p += "/" + part
		if _, err := conn.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

// foreignNode creates an ephemeral sequential node with the given data, as
// another client would, and returns its path.
func foreignNode(t *testing.T, conn *zk.Conn, prefix string, data []byte) string {
	t.Helper()
	createParents(t, conn, prefix)
	p, err := conn.Create(prefix, data, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("create %s: %v", prefix, err)
	}
	return p
}

// assertSafe fails unless out is valid UTF-8 with no control character but
// the newlines that end lines, no C1 control, no bidi override, and exactly
// lines lines.
func assertSafe(t *testing.T, what string, out []byte, lines int) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("%s: not valid UTF-8: %q", what, out)
	}
	for _, r := range string(out) {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == 0x202e {
			t.Errorf("%s: unescaped %U in %q", what, r, out)
			break
		}
	}
	if n := bytes.Count(out, []byte("\n")); n != lines {
		t.Errorf("%s: %d lines, want %d:\n%s", what, n, lines, out)
	}
}

// TestForeignDataEscaped: what other clients wrote into their nodes (data,
// and names) reaches the terminal escaped, in list, holders and tryrun's
// busy message; JSON keeps it exact.
func TestForeignDataEscaped(t *testing.T) {
	root := lockPath(t)
	conn := rawZK(t)
	// A Curator-shaped holder whose data sets the terminal's title, clears
	// the screen, forges a table row and uses C1 and bidi controls.
	evil := "10.0.0.1\x1b]0;pwned\x07\x1b[2J\n" + root + "/raw  1  holding  exclusive  forged\r\u009b31m\u202eexe.txt"
	foreignNode(t, conn, root+"/raw/_c_0f8c1b8e-5c3a-4a43-9d5e-6f6e0c1d2e3f-lock-", []byte(evil))
	// zklock-shaped JSON data whose fields carry the same.
	forged, _ := json.Marshal(map[string]any{"zklock": "9.9", "host": "web\x1b[2J", "pid": 1,
		"user": "root\nforged row", "cmd": []string{"rm", "-rf\x1b]0;x\x07"}})
	foreignNode(t, conn, root+"/json/_c_1f8c1b8e-5c3a-4a43-9d5e-6f6e0c1d2e3f-lock-", forged)
	// A node name with a bidi override, and data that is not UTF-8.
	foreignNode(t, conn, root+"/name/evil\u202e-", []byte("host\xff\xfe"))

	out, err := zklock(t, "list", "--path", root).Output()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	assertSafe(t, "list", out, 4)
	for _, want := range []string{`10.0.0.1\x1b]0;pwned\x07\x1b[2J\n`, `web\x1b[2J`, `root\nforged row`, `evil\u202e-`, `host\xff\xfe`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("list does not show %s:\n%s", want, out)
		}
	}
	for _, p := range []string{"raw", "json", "name"} {
		out, err := zklock(t, "holders", "--path", root+"/"+p).Output()
		if err != nil {
			t.Fatalf("holders %s: %v", p, err)
		}
		assertSafe(t, "holders "+p, out, 2)
	}
	for _, p := range []string{"raw", "json"} {
		c := zklock(t, "tryrun", "--path", root+"/"+p, "--", "true")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if code := zktest.ExitCodeT(t, c.Run()); code != 75 {
			t.Errorf("tryrun %s: exit %d (%s)", p, code, stderr.String())
		}
		assertSafe(t, "busy message "+p, stderr.Bytes(), 1)
		if !strings.Contains(stderr.String(), "is busy") {
			t.Errorf("busy message %s: %q", p, stderr.String())
		}
	}

	out, err = zklock(t, "holders", "--json", "--path", root+"/raw").Output()
	var hs []struct{ Client string }
	if err != nil || json.Unmarshal(out, &hs) != nil || len(hs) != 1 || hs[0].Client != evil {
		t.Errorf("holders --json: %v, %s; want the client data exact", err, out)
	}
}

// TestEnforcedAuth: a server that demands authentication closes the
// session of a client without credentials (error -124). zklock says so, in
// one line naming the path, and exits 77; with credentials it works.
func TestEnforcedAuth(t *testing.T) {
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := zktest.StartStandalone(ctx, zktest.Options{ExtraConfig: map[string]string{
		"enforce.auth.enabled": "true", "enforce.auth.schemes": "digest"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for _, args := range [][]string{
		{"run", "--path", "/locks/job", "--", "true"},
		{"tryrun", "--path", "/locks/job", "--", "true"},
		{"list", "--path", "/locks"},
		{"holders", "--path", "/locks/job"},
	} {
		cmd := zklock(t, append([]string{"--servers", c.ConnectString()}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		code := zktest.ExitCodeT(t, cmd.Run())
		line := stderr.String()
		if code != 77 || strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "zklock: permission denied: cannot ") ||
			!strings.Contains(line, " /locks") ||
			!strings.Contains(line, "the server requires authentication (SASL, or a scheme of its enforce.auth.schemes) and closed the session (check --auth-file, --auth, ZKLOCK_AUTH, --jaas or --sasl") {
			t.Errorf("%q: exit %d, stderr %q", args, code, line)
		}
	}
	file := authFile(t, "digest:alice:pw", 0o600)
	out, err := zklock(t, "--servers", c.ConnectString(), "--auth-file", file, "run", "--path", "/locks/job", "--", "echo", "ran").CombinedOutput()
	if err != nil || string(out) != "ran\n" {
		t.Errorf("with credentials: %v, %q", err, out)
	}
}

// TestPermissionNamesPath: a refused read names the node whose ACL refused
// it, and exits 77.
func TestPermissionNamesPath(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	createParents(t, conn, path)
	if err := conn.AddAuth("digest", []byte("owner:pw")); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(path, nil, 0, zk.DigestACL(zk.PermAll, "owner", "pw")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Delete(path, -1) })
	for _, args := range [][]string{
		{"holders", "--path", path},
		{"--auth", "digest:other:pw", "tryrun", "--path", path, "--", "true"},
	} {
		cmd := zklock(t, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		code := zktest.ExitCodeT(t, cmd.Run())
		want := "the ACL of " + path + " does not let this client"
		if code != 77 || !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 77 and %q", args, code, stderr.String(), want)
		}
	}
}

// containerACL creates a container node with an ACL; the server reaps it
// once its last child is gone.
func containerACL(t *testing.T, conn *zk.Conn, path string, acl []zk.ACL) {
	t.Helper()
	if _, err := conn.CreateContainer(path, nil, zk.FlagContainer, acl); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}

// userConn is a session authenticated as a digest user.
func userConn(t *testing.T, user string) *zk.Conn {
	t.Helper()
	conn := rawZK(t)
	if err := conn.AddAuth("digest", []byte(user+":pw")); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestListSkipsUnreadable: on a shared ensemble, other teams' subtrees are
// closed to this client. list skips each, names it once on stderr, lists
// the rest and exits 0; --json names the skipped paths in their own field.
func TestListSkipsUnreadable(t *testing.T) {
	root := lockPath(t)
	conn := rawZK(t)
	createParents(t, conn, root+"/x")
	// Two teams' subtrees, each with a lock inside, readable by their owner only.
	for _, team := range []string{"alice", "bob"} {
		tc := userConn(t, team)
		containerACL(t, tc, root+"/"+team, zk.DigestACL(zk.PermAll, team, "pw"))
		containerACL(t, tc, root+"/"+team+"/job", zk.WorldACL(zk.PermAll))
		foreignNode(t, tc, root+"/"+team+"/job/_c_2f8c1b8e-5c3a-4a43-9d5e-6f6e0c1d2e3f-lock-", []byte("10.0.0.9"))
	}
	// A readable queue whose waiter's node is closed to us.
	startHolder(t, root+"/open/job")
	carol := userConn(t, "carol")
	if _, err := carol.Create(root+"/open/job/_c_3f8c1b8e-5c3a-4a43-9d5e-6f6e0c1d2e3f-lock-", []byte("10.0.0.10"),
		zk.FlagEphemeral|zk.FlagSequence, zk.DigestACL(zk.PermAll, "carol", "pw")); err != nil {
		t.Fatal(err)
	}
	children, _, _ := conn.Children(root + "/open/job")
	var carolNode string
	for _, ch := range children {
		if strings.HasPrefix(ch, "_c_3f8c") {
			carolNode = root + "/open/job/" + ch
		}
	}
	wantSkipped := []string{root + "/alice", root + "/bob", carolNode}

	c := zklock(t, "list", "--path", root)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("list: %v: %s", err, stderr.String())
	}
	if !bytes.Contains(out, []byte(root+"/open/job  1    holding")) || !bytes.Contains(out, []byte(root+"/open/job  2    waiting")) {
		t.Errorf("list does not show the readable queue:\n%s", out)
	}
	var wantErr string
	for _, p := range wantSkipped {
		wantErr += "zklock: warning: skipped " + p + ": this client may not read it (its ACL does not grant READ)\n"
	}
	if stderr.String() != wantErr {
		t.Errorf("stderr %q, want %q", stderr.String(), wantErr)
	}

	out, err = zklock(t, "list", "--json", "--path", root).Output()
	var listed struct {
		Locks   []struct{ Path string }
		Skipped []string
	}
	if err != nil || json.Unmarshal(out, &listed) != nil || len(listed.Locks) != 1 || listed.Locks[0].Path != root+"/open/job" ||
		strings.Join(listed.Skipped, " ") != strings.Join(wantSkipped, " ") {
		t.Errorf("list --json: %v\n%s", err, out)
	}

	// Alice reads her own subtree; the others stay skipped.
	c = zklock(t, "--auth", "digest:alice:pw", "list", "--path", root)
	stderr.Reset()
	c.Stderr = &stderr
	if out, err = c.Output(); err != nil || !bytes.Contains(out, []byte(root+"/alice/job")) ||
		strings.Contains(stderr.String(), root+"/alice") || !strings.Contains(stderr.String(), root+"/bob") {
		t.Errorf("list as alice: %v\n%s%s", err, out, stderr.String())
	}

	// From the root of the ensemble too.
	c = zklock(t, "list", "--path", "/")
	stderr.Reset()
	c.Stderr = &stderr
	if out, err = c.Output(); err != nil || !bytes.Contains(out, []byte(root+"/open/job")) ||
		!strings.Contains(stderr.String(), "skipped "+root+"/alice:") || !strings.Contains(stderr.String(), "skipped "+root+"/bob:") {
		t.Errorf("list --path /: %v\n%s%s", err, out, stderr.String())
	}

	// The path asked for must itself be readable.
	if code := zktest.ExitCodeT(t, zklock(t, "list", "--path", root+"/alice").Run()); code != 77 {
		t.Errorf("list of an unreadable path: exit %d, want 77", code)
	}
}

// TestDigitNamedLockPath: a lock path whose name ends in ten digits is not
// a contender of its parent. list shows its real queue, not a fake holder
// of the parent, and holders of the parent sees nobody.
func TestDigitNamedLockPath(t *testing.T) {
	root := lockPath(t) + "/locks"
	deploy := root + "/deploy-1732377600" // a container: zklock made it
	startHolder(t, deploy)
	waiter := zklock(t, "run", "--path", deploy, "--", "true")
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waiter.Process.Signal(syscall.SIGTERM); waiter.Wait() })
	conn := rawZK(t)
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, deploy) == 2 })
	// A persistent lock path with a Kazoo holder.
	build := root + "/build-1732377601"
	if _, err := conn.Create(build, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Delete(build, -1) })
	kz := rawZK(t)
	foreignNode(t, kz, build+"/0123456789abcdef0123456789abcdef__lock__", []byte("worker-7"))

	out, err := zklock(t, "list", "--json", "--path", root).Output()
	var list struct {
		Locks []struct {
			Path    string
			Entries []struct{ State, Flavor string }
		}
	}
	if err != nil || json.Unmarshal(out, &list) != nil || len(list.Locks) != 2 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	b, d := list.Locks[0], list.Locks[1]
	if b.Path != build || len(b.Entries) != 1 || b.Entries[0].Flavor != "kazoo" || b.Entries[0].State != "holding" ||
		d.Path != deploy || len(d.Entries) != 2 || d.Entries[0].State != "holding" || d.Entries[1].State != "waiting" {
		t.Errorf("list --json: want the queues of %s and %s:\n%s", build, deploy, out)
	}
	out, err = zklock(t, "holders", "--path", root).Output()
	if err != nil || string(out) != root+" is free\n" {
		t.Errorf("holders of the parent: %v, %q", err, out)
	}
	out, err = zklock(t, "holders", "--path", deploy, "--json").Output()
	if err != nil || bytes.Count(out, []byte(`"state": "holding"`)) != 1 {
		t.Errorf("holders of %s: %v\n%s", deploy, err, out)
	}
}

// TestProtect: with --protect a lock path belongs to its creator across
// reaping. Under a parent set up by an operator (everyone may read and
// create, nobody but the operator may delete), alice's lock path stays
// after the server has reaped empty containers, bob can neither queue on it
// nor delete it, and everyone can still see its queue.
func TestProtect(t *testing.T) {
	root := lockPath(t)
	conn := rawZK(t)
	createParents(t, conn, root)
	admin := userConn(t, "admin")
	if _, err := admin.Create(root, nil, 0, append(zk.DigestACL(zk.PermAll, "admin", "pw"),
		zk.WorldACL(zk.PermRead|zk.PermCreate)...)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []string{root + "/deep/job", root + "/deep", root + "/job", root + "/bob", root} {
			for _, c := range []*zk.Conn{admin, userConn(t, "alice")} {
				if err := c.Delete(p, -1); err == nil || errors.Is(err, zk.ErrNoNode) {
					break
				}
			}
		}
	})
	job := root + "/job"
	alice := []string{"--auth", "digest:alice:pw", "--protect"}
	out, err := zklock(t, append(alice, "run", "--path", job, "--", "echo", "ran")...).CombinedOutput()
	if err != nil || string(out) != "ran\n" {
		t.Fatalf("alice's first run: %v, %s", err, out)
	}
	// Witness a reaping pass: an emptied container beside job goes away.
	containerACL(t, conn, root+"/witness", zk.WorldACL(zk.PermAll))
	if _, err := conn.Create(root+"/witness/x", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Delete(root+"/witness/x", -1); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the server to reap an empty container", func() bool {
		ok, _, err := conn.Exists(root + "/witness")
		return err == nil && !ok
	})
	ok, st, err := conn.Exists(job)
	acl, _, aclErr := conn.GetACL(job)
	if err != nil || !ok || st.EphemeralOwner != 0 || aclErr != nil || len(acl) != 2 ||
		!strings.HasPrefix(acl[0].ID, "alice:") || acl[0].Perms != zk.PermAll ||
		acl[1] != zk.WorldACL(zk.PermRead)[0] {
		t.Fatalf("%s after reaping: exists %v, stat %+v, ACL %+v (%v %v)", job, ok, st, acl, err, aclErr)
	}

	startHolderArgs(t, append(alice, "run", "--path", job))
	// bob may neither queue nor delete the path; he is told which ACL refused.
	c := zklock(t, "--auth", "digest:bob:pw", "tryrun", "--path", job, "--", "true")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if code := zktest.ExitCodeT(t, c.Run()); code != 77 || !strings.Contains(stderr.String(), "the ACL of "+job+" does not let this client create nodes in it") {
		t.Errorf("bob's tryrun: exit %d, %q", code, stderr.String())
	}
	// Nor revoke alice's holder: 77, one line that names the right
	// refused (a write of her node), and her holder goes on.
	c = zklock(t, "--auth", "digest:bob:pw", "revoke", "--path", job)
	stderr.Reset()
	c.Stderr = &stderr
	if code := zktest.ExitCodeT(t, c.Run()); code != 77 || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "does not let this client write it") {
		t.Errorf("bob's revoke: exit %d, %q", code, stderr.String())
	}
	if out, err := zklock(t, "holders", "--path", job).Output(); err != nil || !bytes.Contains(out, []byte("holding")) ||
		bytes.Contains(out, []byte("revoke")) {
		t.Errorf("alice's holder after bob's revoke: %v, %s", err, out)
	}
	if err := userConn(t, "bob").Delete(job, -1); !errors.Is(err, zk.ErrNoAuth) && !errors.Is(err, zk.ErrNotEmpty) {
		t.Errorf("bob deletes %s: %v", job, err)
	}
	// Anyone may read the queue.
	if out, err := zklock(t, "holders", "--path", job).Output(); err != nil || !bytes.Contains(out, []byte("holding")) {
		t.Errorf("holders without credentials: %v, %s", err, out)
	}
	// bob protects a lock path of his own beside it.
	if out, err := zklock(t, "--auth", "digest:bob:pw", "--protect", "run", "--path", root+"/bob", "--", "true").CombinedOutput(); err != nil {
		t.Errorf("bob's own path: %v, %s", err, out)
	}

	// Missing parents are created so that only their creator may delete in them.
	if out, err := zklock(t, append(alice, "run", "--path", root+"/deep/job", "--", "true")...).CombinedOutput(); err != nil {
		t.Fatalf("alice's deep path: %v, %s", err, out)
	}
	acl, _, err = conn.GetACL(root + "/deep")
	if err != nil || len(acl) != 2 || !strings.HasPrefix(acl[0].ID, "alice:") || acl[0].Perms != zk.PermAll ||
		acl[1] != zk.WorldACL(zk.PermRead | zk.PermCreate)[0] {
		t.Errorf("ACL of the created parent: %+v, %v", acl, err)
	}

	// Under a parent that lets everyone delete, protection cannot hold:
	// refused with 64 before anything is created.
	open := lockPath(t)
	createParents(t, conn, open+"/job") // containers open to all, as zklock makes them
	t.Cleanup(func() { conn.Delete(open, -1) })
	c = zklock(t, append(alice, "run", "--path", open+"/job", "--", "true")...)
	stderr.Reset()
	c.Stderr = &stderr
	if code := zktest.ExitCodeT(t, c.Run()); code != 64 || !strings.Contains(stderr.String(), "cannot protect the lock path: "+open+" lets everyone delete") {
		t.Errorf("open parent: exit %d, %q", code, stderr.String())
	}
	if ok, _, err := conn.Exists(open + "/job"); ok || err != nil {
		t.Errorf("%s/job was created (%v)", open, err)
	}
	// Under a chroot, the message names paths as the chroot does, with
	// the server's path of the parent once beside it.
	chroot, rel := path.Dir(open), "/"+path.Base(open)
	c = zklock(t, append([]string{"--servers", server(t).ConnectString() + chroot, "--auth", "digest:alice:pw", "--protect"},
		"run", "--path", rel+"/job", "--", "true")...)
	stderr.Reset()
	c.Stderr = &stderr
	want := "cannot protect the lock path: " + rel + " (" + open + " on the server) lets everyone delete " + rel + "/job while it is free"
	if code := zktest.ExitCodeT(t, c.Run()); code != 64 || !strings.Contains(stderr.String(), want) {
		t.Errorf("open parent under a chroot: exit %d, %q; want %q", code, stderr.String(), want)
	}
	// --protect without credentials is a usage error.
	if code := zktest.ExitCodeT(t, zklock(t, "--protect", "run", "--path", job, "--", "true").Run()); code != 64 {
		t.Errorf("--protect without credentials: exit %d", code)
	}
}
