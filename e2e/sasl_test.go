package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// startSASLServer starts a standalone server with opts and stops it with
// the test.
func startSASLServer(t *testing.T, opts zktest.Options) *zktest.Cluster {
	t.Helper()
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := zktest.StartStandalone(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// writeFile writes a private file in a temporary directory.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func digestJAAS(t *testing.T, user, password string) string {
	return writeFile(t, "client.jaas", fmt.Sprintf(`/* as given to zookeeper-shell */
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username=%q
  password=%q;
};
`, user, password))
}

// runZklock runs zklock and returns its exit code, stdout and stderr.
func runZklock(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	c := zklock(t, args...)
	c.Env = append(c.Env, env...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	code := zktest.ExitCodeT(t, c.Run())
	return code, stdout.String(), stderr.String()
}

// oneLine checks stderr is one zklock line holding every part.
func oneLine(t *testing.T, what, stderr string, parts ...string) {
	t.Helper()
	ok := strings.Count(stderr, "\n") == 1 && strings.HasPrefix(stderr, "zklock: ")
	for _, p := range parts {
		ok = ok && strings.Contains(stderr, p)
	}
	if !ok {
		t.Errorf("%s: stderr %q, want one line with %q", what, stderr, parts)
	}
}

func digestServer(t *testing.T) *zktest.Cluster {
	t.Helper()
	jaas, err := zktest.WriteDigestServerJAAS(t.TempDir(), map[string]string{"bob": "bob-secret", "carol": "carol-secret"})
	if err != nil {
		t.Fatal(err)
	}
	return startSASLServer(t, zktest.SASLOptions(jaas))
}

// TestSASLDigest: against a server that demands SASL, zklock logs in with
// DIGEST-MD5 from the Client section of a Java JAAS file and runs the
// command; the same from flags, with the password from a file or the
// environment. A wrong password is 77 in one line naming the mechanism and
// the user; no credentials is 77 in one line that says SASL is required.
// An unsupported login module or a missing key is 64, naming the file, the
// section and the key. (A lock path belongs to the user who created it, as with digest auth, so
// carol locks her own.)
func TestSASLDigest(t *testing.T) {
	c := digestServer(t)
	srv := "--servers=" + c.ConnectString()

	code, out, errs := runZklock(t, nil, srv, "--jaas", digestJAAS(t, "bob", "bob-secret"), "run", "--path", "/locks/job", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("JAAS file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runZklock(t, []string{"ZKLOCK_JAAS=" + digestJAAS(t, "carol", "carol-secret")}, srv, "tryrun", "--path", "/locks/carol", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("ZKLOCK_JAAS: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	pwFile := writeFile(t, "pw", "bob-secret\n")
	code, out, errs = runZklock(t, nil, srv, "--sasl", "digest", "--sasl-principal", "bob", "--sasl-password-file", pwFile, "run", "--path", "/locks/job", "--", "echo", "ran")
	if code != 0 || out != "ran\n" {
		t.Errorf("--sasl-password-file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runZklock(t, []string{"ZKLOCK_SASL_PASSWORD=carol-secret"}, srv, "--sasl", "digest", "--sasl-principal", "carol", "run", "--path", "/locks/carol", "--", "sh", "-c", `echo "ran ${ZKLOCK_SASL_PASSWORD:-unset}"`)
	if code != 0 || out != "ran unset\n" {
		t.Errorf("ZKLOCK_SASL_PASSWORD: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	code, _, errs = runZklock(t, nil, srv, "--jaas", digestJAAS(t, "bob", "wrong"), "run", "--path", "/locks/job", "--", "echo", "ran")
	if code != 77 {
		t.Errorf("wrong password: exit %d, want 77", code)
	}
	oneLine(t, "wrong password", errs, "DIGEST-MD5", `"bob"`, "refused")

	plain := writeFile(t, "kafka.jaas", `Client { org.apache.kafka.common.security.plain.PlainLoginModule required username="k" password="p"; };`)
	code, _, errs = runZklock(t, nil, srv, "--jaas", plain, "run", "--path", "/locks/job", "--", "true")
	if code != 64 {
		t.Errorf("unsupported login module: exit %d, want 64", code)
	}
	oneLine(t, "unsupported login module", errs, "JAAS file "+plain, "section Client", "PlainLoginModule: not supported")
	code, _, errs = runZklock(t, nil, srv, "--jaas", digestJAAS(t, "bob", ""), "run", "--path", "/locks/job", "--", "true")
	if code != 64 {
		t.Errorf("missing password: exit %d, want 64", code)
	}
	oneLine(t, "missing password", errs, "section Client, key password: missing")

	for _, args := range [][]string{
		{"run", "--path", "/locks/job", "--", "true"},
		{"list", "--path", "/locks"},
	} {
		code, _, errs = runZklock(t, nil, append([]string{srv}, args...)...)
		if code != 77 {
			t.Errorf("%q without credentials: exit %d, want 77", args, code)
		}
		oneLine(t, "no credentials", errs, "requires authentication (SASL")
	}
}

// TestSASLDigestKeptAcrossRestart: a holder logged in with SASL keeps its
// lock while its only server is killed and restarted. ZooKeeper keeps SASL
// identities per connection, so without a new SASL login on the new
// connection the server would refuse the holder's next request and close
// it, and the lock would be lost within a session timeout. The server's log
// shows the holder logging in again after the restart; another client then
// finds the lock busy; the holder keeps it for a further session timeout
// and its command finishes undisturbed.
func TestSASLDigestKeptAcrossRestart(t *testing.T) {
	c := digestServer(t)
	s := c.Server(0)
	// The holder must outlast the restart's outage, or it gives up its
	// lock for lack of contact, as it should: on a loaded machine a JVM's
	// restart can take longer than 0.7 of the usual 6s. So the restart is
	// timed once first, and the timeout follows.
	killed := time.Now()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	outage := time.Since(killed)
	sessionTimeout := outlasting(outage, 6*time.Second)
	t.Logf("a restart took %s: the holder's session timeout is %s", outage.Round(time.Millisecond), sessionTimeout)
	jaas := digestJAAS(t, "bob", "bob-secret")
	base := []string{"--servers=" + c.ConnectString(), "--jaas", jaas, "--session-timeout", sessionTimeout.String()}
	dir := t.TempDir()
	h := zklock(t, append(base, "run", "--path", "/locks/kept", "--", "sh", "-c",
		`touch "$1/held"; while [ ! -e "$1/release" ]; do sleep 0.05; done; echo done`, "sh", dir)...)
	var stdout, stderr bytes.Buffer
	h.Stdout, h.Stderr = &stdout, &stderr
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- h.Wait() }()
	defer func() {
		h.Process.Signal(syscall.SIGKILL)
		<-exited
	}()
	zktest.Eventually(t, 10*time.Second, "the holder to hold", func() bool { return fileExists(filepath.Join(dir, "held")) })

	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, sessionTimeout, "the holder to log in again", func() bool {
		log, err := os.ReadFile(s.LogPath())
		if err != nil {
			return false
		}
		run := log[bytes.LastIndex(log, []byte("==== zktest: starting server")):]
		return bytes.Contains(run, []byte("adding SASL authorization for authorizationID: bob"))
	})
	if code, _, errs := runZklock(t, nil, append(base, "tryrun", "--path", "/locks/kept", "--", "true")...); code != 75 {
		t.Errorf("tryrun while held: exit %d, stderr %q", code, errs)
	}
	// A holder whose new connection were not logged in would lose its
	// session within a session timeout.
	end := time.Now().Add(sessionTimeout)
	for time.Now().Before(end) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the holder exited after the restart: %v; stderr %q", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	exited <- err
	if code := zktest.ExitCodeT(t, err); code != 0 || stdout.String() != "done\n" || stderr.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want an undisturbed command", code, stdout.String(), stderr.String())
	}
}
