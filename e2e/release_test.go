package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestReleaseThroughNewLeader: the holder's command ends, and the leader
// dies with the close that would release the lock (the close reaches the
// leader's proxy, which swallows it, and the leader is killed). The holder
// must send the close again through the new leader, within its release
// timeout, instead of leaving its node until its session expires; the
// waiter's command then starts after the election, not a session timeout
// later.
//
// With ZKLOCK_TEST_ELECTION_TICK (see electionEnsemble) it measures the
// handoff on an ensemble of that timing.
func TestReleaseThroughNewLeader(t *testing.T) {
	ctx, c := ownEnsemble(t, electionEnsemble(t))
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxies, through := proxied(t, c)
	var toLeader *zktest.Proxy
	var toFollowers []*zktest.Proxy
	for i, s := range c.Servers() {
		if s == leader {
			toLeader = proxies[i]
		} else {
			proxies[i].Cut() // until the holder's session is on the leader
			toFollowers = append(toFollowers, proxies[i])
		}
	}
	dir := t.TempDir()
	path := lockPath(t)
	holder := zklock(t, "--servers", through, "--session-timeout", "10s", "-v", "run", "--path", path, "--")
	holder.Args = append(holder.Args, guarded(dir, `touch "$D/started"
while [ ! -e "$D/end" ]; do date +%s%N >> "$D/holder"; sleep 0.01; done
date +%s%N >> "$D/holder"`)...)
	holder.Env = append(holder.Env, "D="+dir)
	var holderErr bytes.Buffer
	holder.Stderr = &holderErr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	for _, p := range toFollowers {
		p.Heal() // the close can go there again
	}
	conn := zktest.DialT(t, c.Addrs())
	waiter := zklock(t, "--servers", c.ConnectString(), "run", "--path", path, "--")
	waiter.Args = append(waiter.Args, guarded(dir, `date +%s%N > "$D/waiter"`)...)
	waiter.Env = append(waiter.Env, "D="+dir)
	var waiterErr bytes.Buffer
	waiter.Stderr = &waiterErr
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waiter.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })

	swallowed := toLeader.SwallowRequest(zktest.OpCloseSession)
	if err := os.WriteFile(filepath.Join(dir, "end"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-swallowed:
	case <-ctx.Done():
		t.Fatal("the holder never sent its close")
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	toLeader.Cut()

	if code := zktest.ExitCodeT(t, holder.Wait()); code != 0 {
		t.Fatalf("holder exit %d: %s", code, holderErr.String())
	}
	if code := zktest.ExitCodeT(t, waiter.Wait()); code != 0 {
		if code == overlapExit {
			t.Fatal("OVERLAP: the waiter started while the holder's command was alive")
		}
		t.Fatalf("waiter exit %d: %s", code, waiterErr.String())
	}
	handoff := time.Duration(lastStamp(t, filepath.Join(dir, "waiter")) - lastStamp(t, filepath.Join(dir, "holder")))
	t.Logf("handoff after the leader died with the release: %s (session timeout 10s)", handoff.Round(time.Millisecond))
	if strings.Contains(holderErr.String(), "could not confirm the release") || !strings.Contains(holderErr.String(), "released "+path) {
		t.Errorf("the holder did not confirm its release through the new leader: %s", holderErr.String())
	}
}
