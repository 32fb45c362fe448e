package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// gatedScript runs until the file named by $1 appears in $D.
const gatedScript = `touch "$D/$1.started"; while [ ! -e "$D/$1" ]; do sleep 0.01; done`

// syncBuffer is a stderr that a test may read while the process writes it.
type syncBuffer = zktest.SyncBuffer

// startGated starts zklock with args, running gatedScript inside the
// overlap detector of dir, and returns it with its stderr.
func startGated(t *testing.T, dir, name string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	c := zklock(t, append(append(args, "--"), append(guarded(dir, gatedScript), "sh", name)...)...)
	c.Env = append(c.Env, "D="+dir)
	stderr := &syncBuffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	return c, stderr
}

// wantExit waits for c and checks its exit code.
func wantExit(t *testing.T, c *exec.Cmd, stderr *syncBuffer, want int, who string) {
	t.Helper()
	if code := zktest.ExitCodeT(t, c.Wait()); code != want {
		if code == overlapExit {
			t.Fatalf("OVERLAP: %s ran while another holder's command was alive; stderr: %s", who, stderr)
		}
		t.Fatalf("%s exit %d, want %d; stderr: %s", who, code, want, stderr)
	}
}

// gatedPair starts a holder (named first) on path, and once its command
// runs, a waiter (second) queued behind it.
func gatedPair(t *testing.T, dir, path, first, second string) (holder *exec.Cmd, holderErr *syncBuffer, waiter *exec.Cmd, waiterErr *syncBuffer) {
	t.Helper()
	conn := rawZK(t)
	holder, holderErr = startGated(t, dir, first, "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, first+".started")) })
	waiter, waiterErr = startGated(t, dir, second, "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })
	return holder, holderErr, waiter, waiterErr
}

// runsInTurn lets the holder ("h") finish, then checks that the waiter
// ("w") ran after it, and said exactly once that it had lost its place.
func runsInTurn(t *testing.T, dir string, holder *exec.Cmd, holderErr *syncBuffer, waiter *exec.Cmd, waiterErr *syncBuffer) {
	t.Helper()
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	zktest.Eventually(t, 10*time.Second, "the waiter's command", func() bool { return fileExists(filepath.Join(dir, "w.started")) })
	touch(t, filepath.Join(dir, "w"))
	wantExit(t, waiter, waiterErr, 0, "waiter")
	if n := strings.Count(waiterErr.String(), "lost its place"); n != 1 {
		t.Errorf("the waiter said %d times that it lost its place, want once; stderr: %s", n, waiterErr)
	}
}

// TestDeletedWaiterRejoins deletes a waiter's node while it waits. It must
// not run when the holder leaves (it holds no place in the queue): it says
// once that it lost its place, joins again at the back, and runs in turn.
func TestDeletedWaiterRejoins(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	holder, holderErr, waiter, waiterErr := gatedPair(t, dir, path, "h", "w")
	ch, _, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	q := recipe.Contenders(ch)
	old := q[1].Name
	if err := conn.Delete(path+"/"+old, -1); err != nil {
		t.Fatal(err)
	}
	// Back in the queue with a new node, while the holder still runs.
	zktest.Eventually(t, 10*time.Second, "the waiter to join again", func() bool {
		ch, _, _ := conn.Children(path)
		q := recipe.Contenders(ch)
		return len(q) == 2 && q[1].Name != old
	})
	runsInTurn(t, dir, holder, holderErr, waiter, waiterErr)
	assertGone(t, conn, path)
}

// TestDeletedLockRecheckedBeforeRun: a job holding /a waits for /b; its
// /a node is deleted and another job takes /a. When /b comes free, the first
// job must notice that /a is no longer its own, give /b back and queue
// again, never running beside the job that now holds /a.
func TestDeletedLockRecheckedBeforeRun(t *testing.T) {
	base, dir := lockPath(t), t.TempDir()
	a, b := base+"/a", base+"/b"
	conn := rawZK(t)
	dirB := t.TempDir() // /b's holder has a detector of its own
	holderB, holderBErr := startGated(t, dirB, "hb", "run", "--path", b)
	zktest.Eventually(t, 10*time.Second, "the holder of /b", func() bool { return fileExists(filepath.Join(dirB, "hb.started")) })
	both, bothErr := startGated(t, dir, "w", "run", "--path", a, "--path", b)
	zktest.Eventually(t, 10*time.Second, "the job to hold /a and wait for /b", func() bool {
		return queueLen(conn, a) == 1 && queueLen(conn, b) == 2
	})
	ch, _, err := conn.Children(a)
	if err != nil || len(ch) != 1 {
		t.Fatalf("%s: %v %v", a, ch, err)
	}
	if err := conn.Delete(a+"/"+ch[0], -1); err != nil {
		t.Fatal(err)
	}
	other, otherErr := startGated(t, dir, "o", "run", "--path", a)
	zktest.Eventually(t, 10*time.Second, "the other job's command", func() bool { return fileExists(filepath.Join(dir, "o.started")) })
	// Free /b: the first job takes it, finds /a gone, and queues again.
	touch(t, filepath.Join(dirB, "hb"))
	wantExit(t, holderB, holderBErr, 0, "holder of /b")
	zktest.Eventually(t, 10*time.Second, "the job to queue again behind the other", func() bool {
		return queueLen(conn, a) == 2 && strings.Contains(bothErr.String(), "lost its place")
	})
	touch(t, filepath.Join(dir, "o"))
	wantExit(t, other, otherErr, 0, "the job now holding /a")
	zktest.Eventually(t, 10*time.Second, "the first job's command", func() bool { return fileExists(filepath.Join(dir, "w.started")) })
	touch(t, filepath.Join(dir, "w"))
	wantExit(t, both, bothErr, 0, "the job with both paths")
}

// TestHeldSinceAcquisition: "held by … since T" gives the time the holder
// took the lock, not the time it joined the queue.
func TestHeldSinceAcquisition(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	// Each time is bracketed by events seen here: the second holder joined
	// between the start of gatedPair and its return, and took the lock
	// after the first one's gate opened and before its own command ran.
	// However slow the machine, the stamp lies within its bracket.
	beforeJoin := time.Now()
	first, firstErr, second, secondErr := gatedPair(t, dir, path, "a", "b")
	joined := time.Now()
	// The brackets must not share a second, the unit the message shows.
	time.Sleep(2 * time.Second)
	released := time.Now()
	touch(t, filepath.Join(dir, "a"))
	wantExit(t, first, firstErr, 0, "first holder")
	zktest.Eventually(t, 10*time.Second, "the second holder", func() bool { return fileExists(filepath.Join(dir, "b.started")) })
	acquired := time.Now()
	stamps := func(from, to time.Time) []string {
		var out []string
		for at := from.Truncate(time.Second); !at.After(to); at = at.Add(time.Second) {
			out = append(out, "since "+at.Local().Format(time.RFC3339))
		}
		return out
	}
	var msg string
	zktest.Eventually(t, 10*time.Second, "the busy message to give the acquisition time", func() bool {
		out, _ := zklock(t, "tryrun", "--path", path, "--", "true").CombinedOutput()
		msg = string(out)
		for _, s := range stamps(released, acquired) {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	})
	for _, s := range stamps(beforeJoin, joined) {
		if strings.Contains(msg, s) {
			t.Errorf("busy message %q gives the time the holder joined", msg)
		}
	}
	touch(t, filepath.Join(dir, "b"))
	wantExit(t, second, secondErr, 0, "second holder")
}

// expireWaiter starts a holder on path and a waiter (waiterArgs) that
// reaches the server through a proxy with a 2s session; it then cuts the
// waiter off until the server has expired its session, and heals the link
// at healed or later.
func expireWaiter(t *testing.T, dir, path string, waiterArgs ...string) (holder *exec.Cmd, holderErr *syncBuffer, waiter *exec.Cmd, waiterErr *syncBuffer, healed time.Time) {
	t.Helper()
	conn := rawZK(t)
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	holder, holderErr = startGated(t, dir, "h", "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	waiter, waiterErr = startGated(t, dir, "w", append([]string{"-v", "--servers", proxy.Addr(), "--session-timeout", "2s"}, waiterArgs...)...)
	// Cut only once the waiter has read the queue and waits in it (-v
	// says so): cut between its create and that read, it could not know
	// that it had a place to lose.
	zktest.Eventually(t, 10*time.Second, "the waiter to wait in the queue", func() bool {
		return queueLen(conn, path) == 2 && strings.Contains(waiterErr.String(), "waiting for "+path)
	})
	proxy.Cut()
	zktest.Eventually(t, 15*time.Second, "the waiter's session to expire", func() bool { return queueLen(conn, path) == 1 })
	healed = time.Now()
	proxy.Heal()
	return holder, holderErr, waiter, waiterErr, healed
}

// TestWaiterLosesSession cuts a waiter off from the server for longer than
// its session timeout, then heals the link. Its session has expired and its
// node is gone: it says once that it lost its place, joins the queue again
// with a new session, and runs after the holder, never beside it.
func TestWaiterLosesSession(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	holder, holderErr, waiter, waiterErr, _ := expireWaiter(t, dir, path, "run", "--path", path)
	zktest.Eventually(t, 15*time.Second, "the waiter to join again", func() bool { return queueLen(conn, path) == 2 })
	if fileExists(filepath.Join(dir, "w.started")) {
		t.Fatal("the waiter ran while the holder held the lock")
	}
	runsInTurn(t, dir, holder, holderErr, waiter, waiterErr)
	assertGone(t, conn, path)
}

// TestWaiterLosesSessionTimeout: --timeout counts the whole wait, across
// the rejoin after a lost session. The waiter first joined before the cut,
// and can join again only after the heal: a clock restarted by the rejoin
// gives up 6s after the heal at the soonest, a clock that counts the
// whole wait sooner by the cut's length (at least the 2s session). That
// holds however long the holder and the waiter took to start on a loaded
// machine, which a bound from the test's start did not.
func TestWaiterLosesSessionTimeout(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	conn := rawZK(t)
	holder, holderErr, waiter, waiterErr, healed := expireWaiter(t, dir, path, "run", "--timeout", "6s", "--path", path)
	wantExit(t, waiter, waiterErr, 75, "waiter")
	d := time.Since(healed)
	t.Logf("the waiter gave up %s after the heal", d.Round(time.Millisecond))
	if d >= 6*time.Second {
		t.Errorf("the waiter gave up %s after the heal with --timeout 6s: the rejoin restarted the clock", d)
	}
	if !strings.Contains(waiterErr.String(), "lost its place") || !strings.Contains(waiterErr.String(), "timed out") {
		t.Errorf("stderr %q", waiterErr)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	assertGone(t, conn, path)
}
