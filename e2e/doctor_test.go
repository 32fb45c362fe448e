package e2e

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// doctor runs zklock doctor with args and returns its exit code, stdout and
// stderr.
func doctor(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c := zklock(t, append([]string{"doctor"}, args...)...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	code := zktest.ExitCodeT(t, c.Run())
	t.Logf("zklock doctor %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return code, stdout.String(), stderr.String()
}

// line finds the checklist line about subject that says what; it fails
// the test when there is none.
func line(t *testing.T, out, mark, subject, what string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == mark && f[1] == subject && strings.Contains(l, what) {
			return
		}
	}
	t.Errorf("no line %q %q ... %q in:\n%s", mark, subject, what, out)
}

// smallestSafe is the figure of the timeout line: "the smallest safe: 7.8s".
func smallestSafe(t *testing.T, out string) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`the smallest safe: ([0-9.]+(ms|s))`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no smallest safe timeout in:\n%s", out)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDoctorHealthy: against a healthy server every check passes (exit 0),
// and the timeout is checked as a standalone server's, with no election;
// the path it had to create is gone again at once, not left for the
// container reaper, and a lock that is held meanwhile keeps its holder and
// its queue.
func TestDoctorHealthy(t *testing.T) {
	conn := rawZK(t)
	path := lockPath(t)
	code, out, _ := doctor(t, "--path", path)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	addr := server(t).Addrs()[0]
	line(t, out, "ok", addr, "reachable")
	line(t, out, "ok", addr, "timeout 10s")
	line(t, out, "ok", "session", "timeout 10s (asked for 10s)")
	line(t, out, "ok", "auth", "none configured")
	line(t, out, "ok", path, "created, read and deleted "+path+"/zklock.probe.")
	// The server runs standalone: no election to count, only the link.
	line(t, out, "ok", "timeout", "(a standalone server: no leader election to ride out)")
	if safe := smallestSafe(t, out); safe >= runner.ElectionAllowance {
		t.Errorf("the smallest safe timeout on a standalone server is %s, at least an election's %s", safe, runner.ElectionAllowance)
	}
	if ok, _, err := conn.Exists(path); err != nil || ok {
		t.Errorf("%s left behind after doctor (exists %v, %v)", path, ok, err)
	}

	held := lockPath(t) + "-held"
	h := startHolder(t, held)
	defer func() { h.Process.Signal(syscall.SIGTERM); h.Wait() }()
	before, _, err := conn.Children(held)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, _ := doctor(t, "--path", held); code != 0 {
		t.Fatalf("exit %d on a held lock, want 0", code)
	} else {
		line(t, out, "ok", held, "created, read and deleted")
	}
	after, _, err := conn.Children(held)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(before, ",") != strings.Join(after, ",") {
		t.Errorf("the held lock's queue changed: %v, then %v", before, after)
	}
}

// TestDoctorMemberDown: one member of a three-server ensemble stopped is a
// failed check and exit 69, though the session and the path, through the
// other two, pass.
func TestDoctorMemberDown(t *testing.T) {
	c := ensemble(t)
	down := c.Server(1)
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}
	path := zktest.TestPath(t, "/doctor")
	code, out, stderr := doctor(t, "--servers", c.ConnectString(), "--path", path)
	if code != 69 {
		t.Fatalf("exit %d, want 69", code)
	}
	line(t, out, "FAIL", down.Addr(), "not reachable: connect: connection refused")
	for _, s := range c.Servers() {
		if s != down {
			line(t, out, "ok", s.Addr(), "round trip")
		}
	}
	line(t, out, "ok", "session", "through")
	line(t, out, "ok", "timeout", ", to ride out a leader election")
	if safe := smallestSafe(t, out); safe < runner.ElectionAllowance {
		t.Errorf("the smallest safe timeout on an ensemble is %s, less than an election's %s", safe, runner.ElectionAllowance)
	}
	line(t, out, "ok", path, "created, read and deleted")
	if !strings.Contains(stderr, "zklock: doctor: 1 of ") {
		t.Errorf("stderr does not count the one failure: %q", stderr)
	}
}

// TestDoctorPermission: a path whose parent's ACL lets this client read but
// not create is exit 77, with the refused request named; nothing is left.
func TestDoctorPermission(t *testing.T) {
	conn := rawZK(t)
	parent := lockPath(t)
	if err := conn.AddAuth("digest", []byte("owner:pw")); err != nil {
		t.Fatal(err)
	}
	acl := append(zk.DigestACL(zk.PermAll, "owner", "pw"), zk.WorldACL(zk.PermRead)...)
	if _, err := conn.Create(parent, nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	defer conn.Delete(parent, -1)
	job := parent + "/job"
	code, out, _ := doctor(t, "--path", job)
	if code != 77 {
		t.Fatalf("exit %d, want 77", code)
	}
	line(t, out, "ok", "session", "through")
	line(t, out, "FAIL", job, "create")
	ch, _, err := conn.Children(parent)
	if err != nil || len(ch) != 0 {
		t.Errorf("%s has children %v after doctor (%v)", parent, ch, err)
	}
}

// TestDoctorTLS: against a TLS server that demands a client certificate the
// handshake is a check of its own; with a CA that did not sign the
// server's certificate that check fails, with the reason, and exit 69.
func TestDoctorTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := zktest.NewPKI(t, zktest.IPOnly)
	addr := "127.0.0.1:" + zktest.StartTLS(ctx, t, p, nil)
	files := []string{"--servers", addr, "--tls-cert", p.Path("client.crt"), "--tls-key", p.Path("client.key")}
	path := lockPath(t)

	code, out, _ := doctor(t, append(files, "--tls-ca", p.Path("ca.pem"), "--path", path)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	line(t, out, "ok", addr, "reachable")
	line(t, out, "ok", addr, "handshake")
	line(t, out, "ok", addr, "round trip")
	line(t, out, "ok", path, "created, read and deleted")

	other := zktest.NewPKI(t, zktest.IPOnly)
	code, out, _ = doctor(t, append(files, "--tls-ca", other.Path("ca.pem"), "--connect-timeout", "2s")...)
	if code != 69 {
		t.Fatalf("exit %d with the wrong CA, want 69", code)
	}
	line(t, out, "ok", addr, "reachable")
	line(t, out, "FAIL", addr, "TLS handshake failed")
	line(t, out, "FAIL", "session", "no session")
}
