package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// lastStamp is the newest nanosecond timestamp in a file of timestamps.
func lastStamp(t testing.TB, p string) int64 {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.ParseInt(f, 10, 64); err == nil && n > last {
			last = n
		}
	}
	return last
}

func readPid(t testing.TB, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// pair is a holder running treeScript under the lock and a waiter queued
// behind it, both inside the overlap detector.
type pair struct {
	dir, path            string
	holder, waiter       *exec.Cmd
	holderErr, waiterErr syncBuffer
}

// startPair starts the holder with holderArgs (global flags), waits until
// its command runs, then queues the waiter (waiterArgs) behind it. queue
// reads the lock's queue length from a server of the right ensemble.
func startPair(t *testing.T, holderArgs, waiterArgs []string, queue func(path string) int) *pair {
	t.Helper()
	return startPairScript(t, treeScript, holderArgs, waiterArgs, queue)
}

// startPairScript is startPair with the holder running script.
func startPairScript(t *testing.T, script string, holderArgs, waiterArgs []string, queue func(path string) int) *pair {
	t.Helper()
	return startPairRun(t, script, holderArgs, nil, waiterArgs, queue)
}

// pairStart bounds the start of a pair's holder and the queueing of its
// waiter; the load driver (BenchmarkLossMargin) gives them longer.
var pairStart = 10 * time.Second

// startPairRun is startPairScript with holderRun among the holder's run
// flags.
func startPairRun(t testing.TB, script string, holderArgs, holderRun, waiterArgs []string, queue func(path string) int) *pair {
	t.Helper()
	p := &pair{dir: t.TempDir(), path: lockPath(t)}
	p.holder = zklock(t, append(append(append(holderArgs, "run", "--path", p.path), holderRun...), append([]string{"--"}, guarded(p.dir, script)...)...)...)
	p.holder.Env = append(p.holder.Env, "D="+p.dir)
	p.holder.Stderr = &p.holderErr
	if err := p.holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.holder.Process.Kill() })
	zktest.Eventually(t, pairStart, "the holder's command", func() bool { return fileExists(filepath.Join(p.dir, "started")) })
	p.waiter = zklock(t, append(append(waiterArgs, "run", "--path", p.path, "--"), guarded(p.dir, `date +%s%N > "$D/waiter"`)...)...)
	p.waiter.Env = append(p.waiter.Env, "D="+p.dir)
	p.waiter.Stderr = &p.waiterErr
	if err := p.waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.waiter.Process.Kill() })
	zktest.Eventually(t, pairStart, "the waiter to queue", func() bool { return queue(p.path) == 2 })
	return p
}

// holderLost checks the holder stopped its command because the lock was lost.
func (p *pair) holderLost(t *testing.T) {
	t.Helper()
	if code := zktest.ExitCodeT(t, p.holder.Wait()); code != 76 {
		t.Fatalf("holder exit %d, want 76 (lock lost); stderr: %s", code, p.holderErr.String())
	}
	if !strings.Contains(p.holderErr.String(), "lock lost") {
		t.Errorf("holder stderr does not say the lock was lost: %s", p.holderErr.String())
	}
}

// waiterNext checks the waiter ran only after the holder's whole command
// tree had died, and returns the gap between the two.
func (p *pair) waiterNext(t *testing.T) time.Duration {
	t.Helper()
	if code := zktest.ExitCodeT(t, p.waiter.Wait()); code != 0 {
		if code == overlapExit {
			t.Fatalf("OVERLAP: the waiter started while the lost holder's command tree was alive; holder's stderr:\n%s", p.holderErr.String())
		}
		t.Fatalf("waiter exit %d: %s", code, p.waiterErr.String())
	}
	if gc := readPid(t, filepath.Join(p.dir, "grandchild")); zktest.ProcessAlive(gc) {
		t.Errorf("the holder's grandchild %d outlived the lock", gc)
	}
	gap := time.Duration(lastStamp(t, filepath.Join(p.dir, "waiter")) - lastStamp(t, filepath.Join(p.dir, "holder")))
	if gap <= 0 {
		t.Fatalf("the waiter started %s before the lost holder's last sign of life", -gap)
	}
	return gap
}

// handoff cuts a holder off from the server with fault and checks the
// handoff to the waiter. It returns the gap.
func handoff(t *testing.T, script string, fault func(*zktest.Proxy)) time.Duration {
	t.Helper()
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	conn := rawZK(t)
	p := startPairScript(t, script, []string{"--servers", proxy.Addr(), "--session-timeout", "2s"},
		[]string{"--session-timeout", "2s"}, func(path string) int { return queueLen(conn, path) })
	fault(proxy)
	p.holderLost(t)
	return p.waiterNext(t)
}

// TestPartition cuts the network between a holder and the server. The
// holder must stop its whole command tree, and exit 76, before the server
// expires its session and the next waiter's command starts.
func TestPartition(t *testing.T) {
	faults := map[string]func(*zktest.Proxy){
		// Silence: the client's connection stays up, nothing arrives.
		"blackhole": (*zktest.Proxy).Blackhole,
		// Reset: the connection drops and reconnects are refused.
		"cut": (*zktest.Proxy).Cut,
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			gap := handoff(t, treeScript, fault)
			t.Logf("gap between the lost holder's last sign of life and the next holder's start: %s", gap.Round(time.Millisecond))
		})
	}
	// The worst case: a command tree that ignores SIGTERM runs until the
	// SIGKILL at T−Margin, so only the margin (T/10, here 200ms) is left.
	t.Run("ignores SIGTERM", func(t *testing.T) {
		gap := handoff(t, "trap '' TERM\n"+treeScript, (*zktest.Proxy).Blackhole)
		t.Logf("worst-case gap (SIGKILL needed) between the lost holder's last sign of life and the next holder's start: %s", gap.Round(time.Millisecond))
	})
}

// TestShortDisconnection: an outage that heals within the deadline does
// not disturb the command.
func TestShortDisconnection(t *testing.T) {
	for name, fault := range map[string]func(*zktest.Proxy){
		"blackhole": (*zktest.Proxy).Blackhole,
		"cut":       (*zktest.Proxy).Cut,
	} {
		t.Run(name, func(t *testing.T) {
			proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
			// T = 4s: stopped after 2.6s of silence; the outage is 1s.
			undisturbed := startUndisturbed(t, proxy.Addr(), "2.5")
			fault(proxy)
			time.Sleep(time.Second)
			proxy.Heal()
			undisturbed()
		})
	}
}

// TestServerRestart: restarting a standalone server keeps the session (it
// is persisted), so a command running across the restart is undisturbed.
// The command ends once the server is back, however long a loaded machine
// takes to restart it, so the release goes to the restarted server; the
// session timeout leaves a restart on a loaded machine (a JVM's start,
// seconds) well inside it.
func TestServerRestart(t *testing.T) {
	dir := t.TempDir()
	c := zklock(t, "--session-timeout", "20s", "run", "--path", lockPath(t), "--",
		"sh", "-c", `touch "$1/started"; while [ ! -e "$1/restarted" ]; do sleep 0.05; done; echo done`, "sh", dir)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	s := server(t).Server(0)
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "restarted"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := zktest.ExitCodeT(t, c.Wait()); code != 0 || stdout.String() != "done\n" || stderr.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want an undisturbed command", code, stdout.String(), stderr.String())
	}
}

// TestKillZklock: SIGKILL on zklock takes its command tree down with it at
// once, and the next waiter proceeds when the session expires.
func TestKillZklock(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	holder := zklock(t, append([]string{"--session-timeout", "2s", "run", "--path", path, "--"},
		guarded(dir, `echo $$ > "$D/child"; `+treeScript)...)...)
	holder.Env = append(holder.Env, "D="+dir)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	waiter := zklock(t, append([]string{"run", "--path", path, "--"}, guarded(dir, `date +%s%N > "$D/waiter"`)...)...)
	waiter.Env = append(waiter.Env, "D="+dir)
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer waiter.Process.Kill()
	conn := rawZK(t)
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })

	child, grandchild := readPid(t, filepath.Join(dir, "child")), readPid(t, filepath.Join(dir, "grandchild"))
	killed := time.Now()
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	// The watchdog kills the tree; without it nothing would, so any bound
	// proves it acted. That it acted before the next holder started is
	// proved by the waiter's flock detector, not by this bound, which a
	// loaded machine must not be able to miss.
	zktest.Eventually(t, 10*time.Second, "the command tree to die with zklock", func() bool {
		return !zktest.ProcessAlive(child) && !zktest.ProcessAlive(grandchild)
	})
	t.Logf("command tree gone %s after SIGKILL", time.Since(killed).Round(time.Millisecond))
	if code := zktest.ExitCodeT(t, waiter.Wait()); code != 0 {
		t.Fatalf("waiter exit %d", code)
	}
	t.Logf("next holder started %s after SIGKILL (session timeout 2s)", time.Since(killed).Round(time.Millisecond))
}

// TestFrozenZklock: the holder's zklock (not its command) is stopped for
// longer than the session timeout, as by SIGSTOP, a debugger, starvation
// or swapping. It can no longer stop its command, and the server expires
// its session on its own clock; the watchdog, which zklock renews on every
// confirmation from the ensemble, must end the command tree before the
// next holder starts. Continued, the holder reports the lost lock.
func TestFrozenZklock(t *testing.T) {
	conn := rawZK(t)
	p := startPair(t, []string{"--session-timeout", "2s"}, []string{"--session-timeout", "2s"},
		func(path string) int { return queueLen(conn, path) })
	frozen := time.Now()
	if err := p.holder.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	gap := p.waiterNext(t)
	t.Logf("next holder started %s after zklock froze; gap after the frozen holder's last sign of life: %s",
		time.Since(frozen).Round(time.Millisecond), gap.Round(time.Millisecond))
	if err := p.holder.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	p.holderLost(t)
}

// startUndisturbed starts zklock (session timeout 4s, through servers) on
// a command that sleeps for the given seconds and prints done, and returns
// once the command runs. The function it returns waits for zklock and
// checks that the command ran to its end, undisturbed, and zklock said
// nothing.
func startUndisturbed(t *testing.T, servers, sleep string) func() {
	t.Helper()
	dir := t.TempDir()
	c := zklock(t, "--servers", servers, "--session-timeout", "4s", "run", "--path", lockPath(t), "--",
		"sh", "-c", `touch "$1/started"; sleep `+sleep+`; echo done`, "sh", dir)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	return func() {
		t.Helper()
		if code := zktest.ExitCodeT(t, c.Wait()); code != 0 || stdout.String() != "done\n" || stderr.Len() != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want an undisturbed command", code, stdout.String(), stderr.String())
		}
	}
}
