package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/peers"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// Hold times inside a critical section, in seconds (sleep(1) syntax).
const (
	holdExclusive = "0.03"
	holdShared    = "0.15"
)

// TestMutexWithCurator: zklock's default locks and Curator's
// InterProcessMutex on one path exclude each other. Three zklock loops and
// two Curator runners queue up behind a gate, then take turns.
func TestMutexWithCurator(t *testing.T) {
	a := newArena(t, true)
	for i := 1; i <= 2; i++ {
		a.peer(fmt.Sprintf("curator-%d", i), "curator", peers.Options{Repeat: 5}, "exclusive", holdExclusive)
	}
	for i := 1; i <= 3; i++ {
		a.zklock(fmt.Sprintf("zklock-%d", i), 4, nil, "exclusive", holdExclusive)
	}
	a.open(func() bool { return a.queued() == a.procs })
	a.wait()
	a.checkDone(2*5+3*4, "curator", "zklock")
	if h := a.handoffs(); h < 2 {
		t.Errorf("the lock passed between zklock and Curator only %d times: %v", h, a.lines("order"))
	}
}

// TestMutexWithKazoo: zklock --flavor kazoo and Kazoo's Lock exclude each
// other.
func TestMutexWithKazoo(t *testing.T) {
	a := newArena(t, true)
	for i := 1; i <= 2; i++ {
		a.peer(fmt.Sprintf("kazoo-%d", i), "kazoo", peers.Options{Repeat: 5}, "exclusive", holdExclusive)
	}
	for i := 1; i <= 3; i++ {
		a.zklock(fmt.Sprintf("zklock-%d", i), 4, []string{"--flavor", "kazoo"}, "exclusive", holdExclusive)
	}
	a.open(func() bool { return a.queued() == a.procs })
	a.wait()
	a.checkDone(2*5+3*4, "kazoo", "zklock")
	if h := a.handoffs(); h < 2 {
		t.Errorf("the lock passed between zklock and Kazoo only %d times: %v", h, a.lines("order"))
	}
}

// TestReadWriteWithCurator: zklock --flavor curator-rw, shared and
// exclusive, against Curator's InterProcessReadWriteLock.
func TestReadWriteWithCurator(t *testing.T) {
	readWrite(t, "curator", []string{"--flavor", "curator-rw"})
}

// TestReadWriteWithKazoo: zklock --flavor kazoo, shared and exclusive,
// against Kazoo's ReadLock and WriteLock.
func TestReadWriteWithKazoo(t *testing.T) {
	readWrite(t, "kazoo", []string{"--flavor", "kazoo"})
}

func readWrite(t *testing.T, runner string, flavor []string) {
	shared := append(append([]string(nil), flavor...), "--shared")
	t.Run("readers-share", func(t *testing.T) {
		// A reader of each client, each waiting inside until it sees the
		// other inside too: they can only both finish if they share.
		a := newArena(t, false)
		a.peer(runner+"-r1", runner, peers.Options{Kind: peers.Read}, "shared", "0", "2", "20000", "1")
		a.zklock("zklock-r1", 1, shared, "shared", "0", "2", "20000", "1")
		a.wait()
		if m := a.mixedInside(runner, "zklock"); m == nil {
			t.Fatalf("a %s reader and a zklock reader were never inside together: %v", runner, a.lines("seen"))
		}
	})
	t.Run("mixed", func(t *testing.T) {
		a := newArena(t, true)
		// A reader of each client first, one after the other, both
		// held at the gate: nobody can leave before it opens, so they
		// are seen inside together whatever the timing. The queue behind
		// them forms in whatever order the rest start in.
		a.peer(runner+"-r1", runner, peers.Options{Kind: peers.Read, Repeat: 4}, "shared", holdShared)
		zktest.Eventually(t, 30*time.Second, "the first reader to hold", func() bool { return len(a.maxInside()) == 1 })
		a.zklock("zklock-r1", 3, shared, "shared", holdShared)
		zktest.Eventually(t, 30*time.Second, "the second reader to hold beside it", func() bool { return len(a.maxInside()) == 2 })
		a.peer(runner+"-w1", runner, peers.Options{Kind: peers.Write, Repeat: 4}, "exclusive", holdExclusive)
		a.peer(runner+"-r2", runner, peers.Options{Kind: peers.Read, Repeat: 4}, "shared", holdShared)
		a.zklock("zklock-w1", 3, flavor, "exclusive", holdExclusive)
		a.zklock("zklock-w2", 3, flavor, "exclusive", holdExclusive)
		a.zklock("zklock-r2", 3, shared, "shared", holdShared)
		a.open(func() bool { return a.queued() == a.procs })
		a.wait()
		a.checkDone(3*4+4*3, runner, "zklock")
		if m := a.mixedInside(runner, "zklock"); m == nil {
			t.Errorf("a %s reader and a zklock reader were never inside together: %v", runner, a.lines("seen"))
		}
	})
}

// semaphoreHold is how long each holder of TestSemaphoreWithCurator stays
// inside, in seconds: the three let in at once by the gate must all be
// inside together, and on a loaded machine waking the third took longer
// than 0.1s.
const semaphoreHold = "0.5"

// TestSemaphoreWithCurator: zklock --limit 3 and Curator's
// InterProcessSemaphoreV2 with 3 leases share the leases: never more than 3
// holders, and 3 are seen at once.
func TestSemaphoreWithCurator(t *testing.T) {
	a := newArena(t, true)
	leases := func() int { ch, _, _ := a.conn.Children(a.path + "/leases"); return len(ch) }
	// The Curator clients take two leases first and wait at the gate, so
	// the first zklock takes the third one beside them.
	for i := 1; i <= 2; i++ {
		a.peer(fmt.Sprintf("curator-%d", i), "curator", peers.Options{Kind: peers.Semaphore, Limit: 3, Repeat: 4}, "shared", semaphoreHold)
	}
	zktest.Eventually(t, 30*time.Second, "the Curator clients to hold two leases", func() bool { return leases() == 2 })
	for i := 1; i <= 3; i++ {
		a.zklock(fmt.Sprintf("zklock-%d", i), 3, []string{"--limit", "3"}, "shared", semaphoreHold)
	}
	// Three hold leases (waiting at the gate), a fourth holds the mutex
	// <path>/locks with its lease queued, the rest queue for the mutex.
	a.open(func() bool {
		leases, _, _ := a.conn.Children(a.path + "/leases")
		locks, _, _ := a.conn.Children(a.path + "/locks")
		return len(leases) == 4 && len(locks) == a.procs-3
	})
	a.wait()
	a.checkDone(2*4+3*3, "curator", "zklock")
	in := a.maxInside()
	if len(in) != 3 {
		t.Errorf("at most %d holders inside at once %v, want exactly 3", len(in), in)
	}
	if m := a.mixedInside("curator", "zklock"); m == nil {
		t.Errorf("Curator and zklock never held leases at the same time: %v", a.lines("seen"))
	} else {
		t.Logf("Curator and zklock holding leases together: %v", m)
	}
}

// listEntry is the part of `zklock list --json` these tests read.
type listEntry struct {
	Position int    `json:"position"`
	Node     string `json:"node"`
	State    string `json:"state"`
	Mode     string `json:"mode"`
	Flavor   string `json:"flavor"`
	Client   string `json:"client"`
	Zklock   bool   `json:"zklock"`
}

type listQueue struct {
	Path    string      `json:"path"`
	Entries []listEntry `json:"entries"`
}

// holder is a peer runner whose command holds the lock until released.
type holder struct {
	dir  string
	cmd  *exec.Cmd
	done chan error
}

func startHolder(t *testing.T, runner string, o peers.Options) *holder {
	t.Helper()
	h := &holder{dir: t.TempDir(), done: make(chan error, 1)}
	o.Servers = server(t).ConnectString()
	argv := append(runnerArgv(t, runner), o.Args("sh", "-c", `touch "$D/in"; while [ ! -e "$D/out" ]; do sleep 0.01; done`)...)
	h.cmd = exec.Command(argv[0], argv[1:]...)
	h.cmd.Env = append(os.Environ(), "D="+h.dir)
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(h.dir, "out"), nil, 0o644)
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			h.cmd.Process.Kill()
		}
	})
	return h
}

func (h *holder) inside() bool {
	_, err := os.Stat(filepath.Join(h.dir, "in"))
	return err == nil
}

// TestListForeignClients: `zklock list --json` shows a Curator and a Kazoo
// client on one path with their flavor and their data, and zklock refuses
// to join a path whose other contenders could not see its node.
func TestListForeignClients(t *testing.T) {
	conn := zktest.DialT(t, server(t).Addrs())
	path := lockPath(t)
	cur := startHolder(t, "curator", peers.Options{Path: path, Data: "billing-service@10.1.2.3"})
	zktest.Eventually(t, 20*time.Second, "the Curator client to hold", cur.inside)
	kz := startHolder(t, "kazoo", peers.Options{Path: path, Data: "report-worker-7"})
	zktest.Eventually(t, 10*time.Second, "the Kazoo client to join", func() bool {
		ch, _, err := conn.Children(path)
		return err == nil && len(ch) == 2
	})

	c := exec.Command(zklockBin(t), "list", "--path", path, "--json")
	c.Env = append(os.Environ(), "ZKLOCK_SERVERS="+server(t).ConnectString())
	out, err := c.Output()
	if err != nil {
		t.Fatalf("zklock list: %v: %s", err, out)
	}
	var list struct{ Locks []listQueue }
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("zklock list --json: %v: %s", err, out)
	}
	qs := list.Locks
	if len(qs) != 1 || qs[0].Path != path || len(qs[0].Entries) != 2 {
		t.Fatalf("zklock list --json: want one queue at %s with two entries, got %s", path, out)
	}
	e1, e2 := qs[0].Entries[0], qs[0].Entries[1]
	curName := regexp.MustCompile(`^_c_[0-9a-f-]{36}-lock-[0-9]{10}$`)
	kzName := regexp.MustCompile(`^[0-9a-f]{32}__lock__[0-9]{10}$`)
	if e1.Flavor != "curator" || e1.Client != "billing-service@10.1.2.3" || e1.Zklock ||
		!curName.MatchString(e1.Node) || e1.Position != 1 || e1.State != "holding" || e1.Mode != "exclusive" {
		t.Errorf("first entry %+v, want the Curator holder", e1)
	}
	if e2.Flavor != "kazoo" || e2.Client != "report-worker-7" || e2.Zklock ||
		!kzName.MatchString(e2.Node) || e2.Position != 2 || e2.Mode != "exclusive" {
		t.Errorf("second entry %+v, want the Kazoo client", e2)
	}
	// Kazoo's Lock looks only at "__lock__" nodes, so it does not wait for
	// Curator's "-lock-" node: both run. That is why zklock refuses to join
	// such a path in either flavor.
	zktest.Eventually(t, 10*time.Second, "the Kazoo client, blind to Curator's node, to run", kz.inside)
	for _, flavor := range []string{"curator", "kazoo"} {
		c := exec.Command(zklockBin(t), "tryrun", "--flavor", flavor, "--path", path, "--", "true")
		c.Env = append(os.Environ(), "ZKLOCK_SERVERS="+server(t).ConnectString())
		out, err := c.CombinedOutput()
		code, err := zktest.ExitCode(err)
		if err != nil {
			t.Fatal(err)
		}
		if code != 64 || !strings.Contains(string(out), "cannot see") {
			t.Errorf("zklock --flavor %s on a path shared by Curator and Kazoo: exit %d, %s; want 64 and a flavor conflict", flavor, code, out)
		}
	}
}
