package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// Partitions of a real 3-server ensemble, the holder's host on the
// minority side with one server. A follower cut off from its leader keeps
// answering its clients (pings, reads) for up to SyncLimit × TickTime,
// while the leader expires the session T after the last touch that reached
// it. These timings make that window (5s) longer than T (4s), as it is with
// ZooKeeper's stock settings (tickTime 2s, syncLimit 5: 10s) and a
// session timeout under 10s.
var partitionTimings = zktest.Options{
	TickTime:    500 * time.Millisecond,
	SyncLimit:   10,
	InitLimit:   10,
	PeerProxies: true,
}

const (
	partitionHolderT = "4s"
	// The waiter's session must outlive an election on the majority side
	// (its server leaves the quorum for SyncLimit × TickTime when the
	// leader is cut off); 10s is the most 20 ticks allow.
	partitionWaiterT = "10s"
	// Bounds after the partition starts: the holder has the server's
	// SyncLimit × TickTime (5s) plus its own budget (T) to stop; the waiter
	// additionally an election and its own session's expiry check.
	holderStopBound = 20 * time.Second
	waiterRunBound  = 30 * time.Second
)

// finiteScript is a holder's command for the case where the lock must be
// kept: timestamps for 8s (past the point where the session would expire
// if the holder stayed with the isolated server), then a clean exit.
const finiteScript = `end=$(( $(date +%s) + 8 ))
touch "$D/started"
while [ "$(date +%s)" -lt "$end" ]; do date +%s%N >> "$D/holder"; sleep 0.01; done
touch "$D/finished"`

// partitionCase is one way to cut the holder off.
type partitionCase struct {
	name string
	// leader: the holder's server is the leader (else a follower).
	leader bool
	// allNamed: the holder's connect string names all three servers,
	// through client-side proxies; else only its own server, directly.
	allNamed bool
	// majorityReachable: the holder's links to the other two servers stay
	// up (only its server is isolated), so it can move and keep the lock.
	majorityReachable bool
}

// TestEnsemblePartition: in every partition that leaves the holder's host
// on the minority side, the holder's whole command tree is dead before the
// waiter's command starts (kernel overlap detector and timestamps), and
// the holder exits 76. A holder that can still reach the majority moves
// there, keeps the lock and finishes its command; the waiter runs after it.
func TestEnsemblePartition(t *testing.T) {
	zktest.NeedServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	c, err := zktest.StartEnsemble(ctx, 3, partitionTimings)
	cancel()
	if err != nil {
		t.Fatalf("cannot start a 3-server ensemble with peer proxies: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	for _, pc := range []partitionCase{
		{name: "follower, only it named", leader: false, allNamed: false},
		{name: "follower, all named", leader: false, allNamed: true},
		{name: "leader, only it named", leader: true, allNamed: false},
		{name: "leader, all named", leader: true, allNamed: true},
		{name: "follower, majority reachable", leader: false, allNamed: true, majorityReachable: true},
	} {
		t.Run(pc.name, func(t *testing.T) { runPartition(t, c, pc) })
	}
}

// exited is a finished process: its exit code and when it was seen.
type exited struct {
	code int
	err  error
	at   time.Time
}

func waitAsync(cmd *exec.Cmd) <-chan exited {
	ch := make(chan exited, 1)
	go func() {
		err := cmd.Wait()
		code, werr := zktest.ExitCode(err)
		ch <- exited{code: code, err: werr, at: time.Now()}
	}()
	return ch
}

// waitExit waits until from+bound for a process started with waitAsync,
// and kills it if it is still running then.
func waitExit(t *testing.T, who string, cmd *exec.Cmd, ch <-chan exited, from time.Time, bound time.Duration) (exited, bool) {
	t.Helper()
	select {
	case e := <-ch:
		if e.err != nil {
			t.Fatalf("%s: %v", who, e.err)
		}
		return e, true
	case <-time.After(time.Until(from.Add(bound))):
		cmd.Process.Kill()
		<-ch
		t.Errorf("%s still running %s after the partition", who, bound)
		return exited{}, false
	}
}

// modeLog records each server's role changes from start until stop, for
// the test log: when the isolated server stopped serving, when the
// majority had a leader again.
type modeLog struct {
	stop  chan struct{}
	done  chan struct{}
	lines []string
}

func watchModes(c *zktest.Cluster, from time.Time) *modeLog {
	m := &modeLog{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		last := make([]string, c.Len())
		for {
			for i, s := range c.Servers() {
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				mode, err := s.Mode(ctx)
				cancel()
				if err != nil {
					mode = "not serving"
				}
				if mode != last[i] {
					last[i] = mode
					m.lines = append(m.lines, fmt.Sprintf("+%s server %d: %s", time.Since(from).Round(time.Millisecond), s.ID(), mode))
				}
			}
			select {
			case <-m.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return m
}

// report stops the watcher and returns what it saw.
func (m *modeLog) report() string {
	close(m.stop)
	<-m.done
	return strings.Join(m.lines, "; ")
}

func stampFile(t *testing.T, p string) (time.Time, bool) {
	t.Helper()
	if !fileExists(p) {
		return time.Time{}, false
	}
	return time.Unix(0, lastStamp(t, p)), true
}

func runPartition(t *testing.T, c *zktest.Cluster, pc partitionCase) {
	ctx := t.Context()
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target := leader.ID() - 1
	if !pc.leader {
		target = (target + 1) % 3
	}
	isolated := c.Server(target)
	var majority []string
	for i := range 3 {
		if i != target {
			majority = append(majority, c.Server(i).Addr())
		}
	}
	t.Cleanup(func() {
		// Give the next case the whole ensemble back.
		c.HealAll()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.WaitServing(ctx); err != nil {
			t.Errorf("the ensemble did not heal: %v", err)
		}
	})

	// The holder's client links: through proxies when it names all three,
	// so that its host can be cut off from the majority. Until its command
	// runs, only its own server is reachable, so that it connects there.
	servers := isolated.Addr()
	var others []*zktest.Proxy
	if pc.allNamed {
		var addrs []string
		for i := range 3 {
			p := zktest.NewProxyT(t, c.Server(i).Addr())
			addrs = append(addrs, p.Addr())
			if i != target {
				p.Cut()
				others = append(others, p)
			}
		}
		servers = strings.Join(addrs, ",")
	}

	dir := t.TempDir()
	path := lockPath(t)
	script := treeScript
	if pc.majorityReachable {
		script = finiteScript
	}
	holder := zklock(t, append([]string{"--servers", servers, "--session-timeout", partitionHolderT, "run", "--path", path, "--"},
		guarded(dir, `echo "$ZKLOCK_SESSION_ID" > "$D/session"; `+script)...)...)
	holder.Env = append(holder.Env, "D="+dir)
	var holderErr bytes.Buffer
	holder.Stderr = &holderErr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	holderDone := waitAsync(holder)
	t.Cleanup(func() { holder.Process.Kill() })
	zktest.Eventually(t, 15*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "started")) })
	for _, p := range others {
		p.Heal()
	}
	b, _ := os.ReadFile(filepath.Join(dir, "session"))
	if s := connectedServer(t, c, strings.TrimSpace(string(b))); s != isolated {
		t.Fatalf("the holder is connected to server %d, want %d", s.ID(), isolated.ID())
	}

	// The waiter is on the majority side, connected to its servers directly.
	// Its command stamps the time before it takes the detector's lock, so
	// that an overlap can be measured even when the detector refuses it.
	waiter := zklock(t, append([]string{"--servers", strings.Join(majority, ","), "--session-timeout", partitionWaiterT, "run", "--path", path, "--",
		"sh", "-c", `date +%s%N > "$D/waiter-start"; exec "$@"`, "sh"},
		guarded(dir, `date +%s%N > "$D/waiter"`)...)...)
	waiter.Env = append(waiter.Env, "D="+dir)
	var waiterErr bytes.Buffer
	waiter.Stderr = &waiterErr
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	waiterDone := waitAsync(waiter)
	t.Cleanup(func() { waiter.Process.Kill() })
	conn := zktest.DialT(t, majority)
	zktest.Eventually(t, 15*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })

	cutAt := time.Now()
	modes := watchModes(c, cutAt)
	c.Isolate(target, (*zktest.Proxy).Blackhole)
	if !pc.majorityReachable {
		for _, p := range others {
			p.Blackhole()
		}
	}
	role := "follower"
	if pc.leader {
		role = "leader"
	}
	t.Logf("partition: {server %d (%s), holder} | {servers %s, waiter}", isolated.ID(), role, strings.Join(majority, ", "))

	h, hok := waitExit(t, "the holder", holder, holderDone, cutAt, holderStopBound)
	w, wok := waitExit(t, "the waiter", waiter, waiterDone, cutAt, waiterRunBound)
	t.Logf("roles: %s", modes.report())
	if wok && waiterErr.Len() > 0 {
		t.Logf("waiter stderr: %s", waiterErr.String())
	}
	since := func(at time.Time) string { return at.Sub(cutAt).Round(time.Millisecond).String() }
	holderLast, _ := stampFile(t, filepath.Join(dir, "holder"))
	waiterStart, started := stampFile(t, filepath.Join(dir, "waiter-start"))
	if hok {
		t.Logf("holder: exit %d at +%s; its command's last sign of life at +%s", h.code, since(h.at), since(holderLast))
	}
	if started {
		t.Logf("waiter: command started at +%s", since(waiterStart))
	}
	if started {
		if d := waiterStart.Sub(holderLast); d > 0 {
			t.Logf("gap: %s between the holder's last sign of life and the waiter's start", d.Round(time.Millisecond))
		} else {
			t.Errorf("OVERLAP: the waiter's command started %s before the holder's command stopped", (-d).Round(time.Millisecond))
		}
	}
	if wok {
		switch w.code {
		case 0:
		case overlapExit:
			t.Errorf("OVERLAP: the kernel lock was still held by the holder's command tree when the waiter's command started")
		default:
			t.Errorf("waiter exit %d: %s", w.code, waiterErr.String())
		}
	}
	if gc := filepath.Join(dir, "grandchild"); fileExists(gc) {
		if pid := readPid(t, gc); zktest.ProcessAlive(pid) {
			t.Errorf("the holder's grandchild %d is still alive", pid)
		}
	}
	if !hok {
		return
	}
	if pc.majorityReachable {
		if h.code != 0 || !fileExists(filepath.Join(dir, "finished")) {
			t.Errorf("the holder could reach the majority but exit %d, command finished: %v; stderr: %s",
				h.code, fileExists(filepath.Join(dir, "finished")), holderErr.String())
		}
		return
	}
	if h.code != 76 || !strings.Contains(holderErr.String(), "lock lost") {
		t.Errorf("holder exit %d, want 76 (lock lost); stderr: %s", h.code, holderErr.String())
	}
}
