package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// A server whose state is older than what a client has seen refuses to
// resume its session, and logs so.
const refusedLine = "as it has seen zxid"

// loneHolder starts a holder running script in the overlap detector,
// with the session timeout given (-v), on servers, and no waiter.
func loneHolder(t *testing.T, servers string, timeout time.Duration, script string) *pair {
	t.Helper()
	p := &pair{dir: t.TempDir(), path: lockPath(t)}
	p.holder = zklock(t, "--servers", servers, "--session-timeout", timeout.String(), "-v", "run", "--path", p.path, "--")
	p.holder.Args = append(p.holder.Args, guarded(p.dir, script)...)
	p.holder.Env = append(p.holder.Env, "D="+p.dir)
	p.holder.Stderr = &p.holderErr
	if err := p.holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.holder.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(p.dir, "started")) })
	return p
}

// outlasting is a holder's session timeout, at least usual, that
// outlasts an outage like the one measured, so that the holder is still
// trying to resume its session when the servers are back: a holder gives
// up on its own after about 0.7 T without contact (internal/runner's
// budget), and on a loaded machine a restart of the servers can take
// longer than that with the usual timeout.
func outlasting(outage, usual time.Duration) time.Duration {
	return max(usual, (4*outage).Round(time.Second)+time.Second)
}

// refused waits until one of servers logs that it refused the holder's
// session for being behind the client. A holder that gave up first, for
// lack of contact, never asks: that is said at once.
func (p *pair) refused(t *testing.T, servers []*zktest.Server) {
	t.Helper()
	zktest.Eventually(t, 30*time.Second, "a server to refuse the holder's resume", func() bool {
		if msg := p.holderErr.String(); strings.Contains(msg, "no contact with the ZooKeeper quorum") {
			t.Fatalf("the holder gave up for lack of contact before the servers were back: %s", msg)
		}
		for _, s := range servers {
			if b, err := os.ReadFile(s.LogPath()); err == nil && bytes.Contains(b, []byte(refusedLine)) {
				return true
			}
		}
		return false
	})
}

// tryNext runs a tryrun of the holder's lock, in the overlap detector,
// once the holder's lock is gone (the restored ensemble refused it, its
// node was deleted): it must run, and not find the holder's command alive.
func (p *pair) tryNext(t *testing.T, servers string) {
	t.Helper()
	c := zklock(t, "--servers", servers, "tryrun", "--path", p.path, "--")
	c.Args = append(c.Args, guarded(p.dir, `date +%s%N > "$D/waiter"`)...)
	c.Env = append(c.Env, "D="+p.dir)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	switch code := zktest.ExitCodeT(t, err); code {
	case 0:
	case overlapExit:
		t.Fatalf("OVERLAP: a tryrun ran while the lost holder's command tree was alive")
	default:
		t.Fatalf("tryrun after the loss: exit %d: %s", code, stderr.String())
	}
	gap := time.Duration(lastStamp(t, filepath.Join(p.dir, "waiter")) - lastStamp(t, filepath.Join(p.dir, "holder")))
	t.Logf("the tryrun's command started %s after the holder's last sign of life", gap.Round(time.Millisecond))
}

// holderLostState checks the holder exited 76, naming the lost state.
func (p *pair) holderLostState(t *testing.T) {
	t.Helper()
	if code := zktest.ExitCodeT(t, p.holder.Wait()); code != 76 {
		t.Fatalf("holder exit %d, want 76 (lock lost); stderr: %s", code, p.holderErr.String())
	}
	msg := p.holderErr.String()
	if !strings.Contains(msg, "lock lost") || !strings.Contains(msg, "restored from an older copy") {
		t.Errorf("holder stderr does not say why the lock was lost: %s", msg)
	}
	for _, line := range strings.Split(msg, "\n") {
		if strings.Contains(line, "lock lost") {
			t.Logf("holder: %s", line)
		}
	}
	if gc := readPid(t, filepath.Join(p.dir, "grandchild")); zktest.ProcessAlive(gc) {
		t.Errorf("the holder's grandchild %d outlived the lock", gc)
	}
}

// TestWipedServer: a standalone server stops, loses its data directory
// and starts again on the same port. It refuses the holder's resume (the
// holder has seen a newer zxid) and admits anyone else: the holder must
// take that refusal for the lost lock it is, at once, and not for silence
// until its deadline; and, the loss being certain, kill its command at
// once, with no grace (with one, it ran on for 2s beside the tryrun).
func TestWipedServer(t *testing.T) {
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := zktest.StartStandalone(ctx, zktest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	s := c.Server(0)
	// The holder must still be trying to resume when the wiped server is
	// back, or it gives up for lack of contact first and the refusal is
	// never tested: a restart is timed once, and the timeout follows.
	stopped := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	sessionTimeout := outlasting(time.Since(stopped), 10*time.Second)
	// A command that ignores SIGTERM: the loss is certain, and any grace
	// would let it run on beside the tryrun.
	p := loneHolder(t, c.ConnectString(), sessionTimeout, "trap '' TERM\n"+treeScript)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreData(""); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	p.refused(t, c.Servers())
	p.tryNext(t, c.ConnectString())
	p.holderLostState(t)
	t.Logf("holder stopped %s after the wiped server started", time.Since(restarted).Round(time.Millisecond))
}

// restartAll starts every server of c again at once: an ensemble member
// serves only once a quorum is up.
func restartAll(t *testing.T, ctx context.Context, c *zktest.Cluster) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, c.Len())
	for i, s := range c.Servers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Restart(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRestoredEnsemble: every member of a 3-server ensemble is restored
// from a copy of its data taken before the holder's session began. The
// restored ensemble elects a leader and serves, refuses the holder's
// resume and admits anyone else: the holder must stop at once.
func TestRestoredEnsemble(t *testing.T) {
	ctx, c := ownEnsemble(t, zktest.Options{})
	backup := t.TempDir()
	stopped := time.Now()
	for i, s := range c.Servers() {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveData(filepath.Join(backup, string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	restartAll(t, ctx, c)
	// The restore below takes the ensemble down for as long again.
	outage := time.Since(stopped)
	timeout := outlasting(outage, 10*time.Second)
	t.Logf("stopping and restarting the ensemble took %s: the holder's session timeout is %s", outage.Round(time.Millisecond), timeout)

	p := loneHolder(t, c.ConnectString(), timeout, treeScript)
	for _, s := range c.Servers() {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range c.Servers() {
		if err := s.RestoreData(filepath.Join(backup, string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	restarted := time.Now()
	restartAll(t, ctx, c)
	p.refused(t, c.Servers())
	p.tryNext(t, c.ConnectString())
	p.holderLostState(t)
	t.Logf("holder stopped %s after the restored ensemble was started", time.Since(restarted).Round(time.Millisecond))
}
