package interop

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/peers"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// detected is a command inside the overlap detector: the shell itself holds
// the kernel lock on $D/detector (its loop's sleeps do not), so the lock is
// free exactly when that shell is dead. It marks $D/$1 once inside and
// stays until $D/$1.out appears; an overlap exits 99.
const detected = `exec 8>>"$D/detector"; flock -n 8 || exit 99; touch "$D/$1"
while [ ! -e "$D/$1.out" ]; do sleep 0.01 8>&-; done`

// revokeArena is a directory for detected commands.
type revokeArena struct {
	t   *testing.T
	dir string
}

func (a *revokeArena) start(argv []string, stderr *bytes.Buffer) *exec.Cmd {
	a.t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = append(os.Environ(), "ZKLOCK_SERVERS="+server(a.t).ConnectString(), "NO_COLOR=1", "D="+a.dir)
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() {
		os.WriteFile(filepath.Join(a.dir, "h.out"), nil, 0o644)
		os.WriteFile(filepath.Join(a.dir, "w.out"), nil, 0o644)
		c.Process.Kill()
	})
	return c
}

func (a *revokeArena) inside(name string) func() bool {
	return func() bool {
		_, err := os.Stat(filepath.Join(a.dir, name))
		return err == nil
	}
}

func (a *revokeArena) exit(c *exec.Cmd, stderr *bytes.Buffer, want int, who string) {
	a.t.Helper()
	code, err := zktest.ExitCode(c.Wait())
	if err != nil {
		a.t.Fatal(err)
	}
	if code == 99 {
		a.t.Fatalf("OVERLAP: %s ran while the other holder was alive; stderr: %s", who, stderr)
	}
	if code != want {
		a.t.Fatalf("%s exit %d, want %d; stderr: %s", who, code, want, stderr)
	}
}

// runsNext waits for the waiter w to run its command once the revoked
// holder is gone, lets the command finish, and expects exit 0.
func (a *revokeArena) runsNext(waiter *exec.Cmd, stderr *bytes.Buffer, who string) {
	a.t.Helper()
	zktest.Eventually(a.t, 10*time.Second, who+"'s command", a.inside("w"))
	os.WriteFile(filepath.Join(a.dir, "w.out"), nil, 0o644)
	a.exit(waiter, stderr, 0, who)
}

func zklockRun(t *testing.T, path, name string) []string {
	return []string{zklockBin(t), "run", "--path", path, "--", "sh", "-c", detected, "sh", name}
}

// TestRevokeCuratorHolder: `zklock revoke` reaches a Curator
// InterProcessMutex made revocable. Curator stops its command and releases;
// the zklock waiter behind it runs, never at the same time.
func TestRevokeCuratorHolder(t *testing.T) {
	a := &revokeArena{t: t, dir: t.TempDir()}
	path := lockPath(t)
	conn := zktest.DialT(t, server(t).Addrs())
	o := peers.Options{Servers: server(t).ConnectString(), Path: path, Revocable: true}
	var curErr, zkErr bytes.Buffer
	cur := a.start(append(runnerArgv(t, "curator"), o.Args("sh", "-c", detected, "sh", "h")...), &curErr)
	zktest.Eventually(t, 30*time.Second, "the Curator holder's command", a.inside("h"))
	waiter := a.start(zklockRun(t, path, "w"), &zkErr)
	zktest.Eventually(t, 10*time.Second, "the zklock waiter to queue", func() bool {
		ch, _, err := conn.Children(path)
		return err == nil && len(ch) == 2
	})

	c := exec.Command(zklockBin(t), "revoke", "--path", path, "--wait", "--timeout", "20s")
	c.Env = append(os.Environ(), "ZKLOCK_SERVERS="+server(t).ConnectString())
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("zklock revoke --wait: %v: %s", err, out)
	}
	a.exit(cur, &curErr, 143, "the revoked Curator holder")
	if !strings.Contains(curErr.String(), "revoked") {
		t.Errorf("the Curator runner did not see the revocation: %s", curErr.String())
	}
	a.runsNext(waiter, &zkErr, "the zklock waiter")
}

// TestCuratorRevokesZklock: Curator's Revoker.attemptRevoke stops a zklock
// holder: exit 76, naming a revoker that left no record, and the waiter
// behind it runs after it.
func TestCuratorRevokesZklock(t *testing.T) {
	a := &revokeArena{t: t, dir: t.TempDir()}
	path := lockPath(t)
	conn := zktest.DialT(t, server(t).Addrs())
	var holdErr, waitErr bytes.Buffer
	holder := a.start(zklockRun(t, path, "h"), &holdErr)
	zktest.Eventually(t, 10*time.Second, "the zklock holder's command", a.inside("h"))
	waiter := a.start(zklockRun(t, path, "w"), &waitErr)
	var first string
	zktest.Eventually(t, 10*time.Second, "the zklock waiter to queue", func() bool {
		ch, _, err := conn.Children(path)
		if err != nil || len(ch) != 2 {
			return false
		}
		first = recipe.Contenders(ch)[0].Name
		return true
	})

	argv := append(runnerArgv(t, "curator"), peers.RevokeArgs(server(t).ConnectString(), path+"/"+first)...)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("Curator's Revoker: %v: %s", err, out)
	}
	a.exit(holder, &holdErr, 76, "the revoked zklock holder")
	if !strings.Contains(holdErr.String(), "revoked by a client that left no record") {
		t.Errorf("the holder does not say it was revoked: %s", holdErr.String())
	}
	a.runsNext(waiter, &waitErr, "the waiter")
}

// TestRevokeKazooHolder: Kazoo's locks have no revocation, so `zklock
// revoke` of a Kazoo holder writes nothing (the identifier Kazoo keeps in
// its node stays) and says so: 75 with one line, at once, not after a
// wait that could never end. The holder goes on undisturbed.
func TestRevokeKazooHolder(t *testing.T) {
	a := &revokeArena{t: t, dir: t.TempDir()}
	path := lockPath(t)
	conn := zktest.DialT(t, server(t).Addrs())
	o := peers.Options{Servers: server(t).ConnectString(), Path: path}
	var kzErr bytes.Buffer
	kz := a.start(append(runnerArgv(t, "kazoo"), o.Args("sh", "-c", detected, "sh", "h")...), &kzErr)
	zktest.Eventually(t, 30*time.Second, "the Kazoo holder's command", a.inside("h"))
	ch, _, err := conn.Children(path)
	if err != nil || len(ch) != 1 {
		t.Fatalf("the Kazoo holder's node: %v %v", ch, err)
	}
	before, _, err := conn.Get(path + "/" + ch[0])
	if err != nil {
		t.Fatal(err)
	}

	c := exec.Command(zklockBin(t), "revoke", "--path", path, "--wait")
	c.Env = append(os.Environ(), "ZKLOCK_SERVERS="+server(t).ConnectString(), "NO_COLOR=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if code, _ := zktest.ExitCode(err); code != 75 || strings.Count(stderr.String(), "\n") != 1 ||
			!strings.Contains(stderr.String(), "Kazoo's locks have no revocation") {
			t.Errorf("revoke of a Kazoo holder: exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		c.Process.Kill()
		t.Fatalf("revoke --wait of a Kazoo holder still waits: %s", stderr.String())
	}
	after, _, err := conn.Get(path + "/" + ch[0])
	if err != nil || !bytes.Equal(after, before) {
		t.Errorf("the Kazoo holder's data was %q, is %q (%v)", before, after, err)
	}
	os.WriteFile(filepath.Join(a.dir, "h.out"), nil, 0o644)
	a.exit(kz, &kzErr, 0, "the Kazoo holder")
}
