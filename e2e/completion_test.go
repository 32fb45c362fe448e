package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// completePaths runs the shell's completion request for --path and returns
// the offered values and the time it took.
func completePaths(t *testing.T, env []string, args ...string) ([]string, time.Duration) {
	t.Helper()
	c := zklock(t, append([]string{"__complete"}, args...)...)
	c.Env = append(c.Env, env...)
	start := time.Now()
	out, err := c.Output()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%q: %v: %s", args, err, out)
	}
	var values []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, ":") && l != "" {
			values = append(values, l)
		}
	}
	return values, took
}

// TestCompletePath: --path completes from the server's nodes, with the
// servers any source gives (here a configuration file), and offers
// nothing, quickly, when no server answers.
func TestCompletePath(t *testing.T) {
	base := zktest.TestPath(t, "/complete")
	conn := rawZK(t)
	for _, p := range []string{"/complete", base, base + "/alpha", base + "/alps", base + "/beta"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	got, _ := completePaths(t, nil, "run", "--path", base+"/al")
	if strings.Join(got, " ") != base+"/alpha "+base+"/alps" {
		t.Errorf("run --path %s/al completes to %q", base, got)
	}
	got, _ = completePaths(t, nil, "forget", "--path", base+"/al")
	if strings.Join(got, " ") != base+"/alpha "+base+"/alps" {
		t.Errorf("forget --path %s/al completes to %q", base, got)
	}
	got, _ = completePaths(t, nil, "holders", "--path", base+"/")
	if len(got) != 3 {
		t.Errorf("holders --path %s/ completes to %q", base, got)
	}

	// Only a name that is one plain shell word is offered: bash puts the
	// completion onto the line unquoted, so a space would split it and
	// $(...) or `...` would run when the line is entered; a bidi override
	// or a line separator, which the server allows and a terminal would
	// obey rather than show, could not be shown as it is.
	for _, p := range []string{base + "/gamma-ray_1.2", base + "/gamma ray", base + "/g$(touch pwned)", base + "/g`id`",
		base + "/g'q", base + "/g\u202eevil", base + "/g\u2028x"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %q: %v", p, err)
		}
	}
	got, _ = completePaths(t, nil, "run", "--path", base+"/g")
	if strings.Join(got, "|") != base+"/gamma-ray_1.2" {
		t.Errorf("run --path %s/g completes to %q, want only %s/gamma-ray_1.2", base, got, base)
	}

	// The servers from a configuration file, none in the environment.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("servers = \""+server(t).ConnectString()+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = completePaths(t, []string{"ZKLOCK_SERVERS=", "ZKLOCK_CONFIG=" + cfg}, "tryrun", "--path", base+"/b")
	if strings.Join(got, " ") != base+"/beta" {
		t.Errorf("with the servers from %s: %q", cfg, got)
	}

	// Refused, and a server that accepts and never answers.
	silent := zktest.NewProxyT(t, server(t).Addrs()[0])
	silent.Blackhole()
	for _, servers := range []string{"127.0.0.1:1", silent.Addr()} {
		got, took := completePaths(t, []string{"ZKLOCK_SERVERS=" + servers}, "run", "--path", base+"/a")
		if len(got) != 0 {
			t.Errorf("%s: offered %q", servers, got)
		}
		// A generous bound on a loaded machine; the timeout is 2s.
		if took > 8*time.Second {
			t.Errorf("%s: completion took %s", servers, took)
		}
		t.Logf("%s: nothing offered after %s", servers, took)
	}
}

// TestCompleteNode: revoke --node completes from the contenders at --path,
// in queue order and named as list shows them (a semaphore's as
// leases/NAME), filtered by what is typed; without --path it offers
// nothing, and never file names.
func TestCompleteNode(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	startHolder(t, path)
	waiter := zklock(t, "run", "--path", path, "--", "true")
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = waiter.Process.Signal(syscall.SIGTERM); _ = waiter.Wait() })
	zktest.Eventually(t, 10*time.Second, "a waiter", func() bool { return queueLen(conn, path) == 2 })
	children, _, err := conn.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(children, func(i, j int) bool { return children[i][len(children[i])-10:] < children[j][len(children[j])-10:] })
	got, _ := completePaths(t, nil, "revoke", "--path", path, "--node", "")
	if strings.Join(got, " ") != strings.Join(children, " ") {
		t.Errorf("revoke --path %s --node completes to %q, want the queue %q", path, got, children)
	}
	got, _ = completePaths(t, nil, "revoke", "--path", path, "--node", children[1][:len(children[1])-3])
	if strings.Join(got, " ") != children[1] {
		t.Errorf("a typed prefix of the waiter completes to %q, want %q", got, children[1])
	}
	sem := lockPath(t) + "-sem"
	startHolderArgs(t, []string{"run", "--limit", "2", "--path", sem})
	zktest.Eventually(t, 10*time.Second, "a lease", func() bool { return queueLen(conn, sem+"/leases") == 1 })
	if got, _ = completePaths(t, nil, "revoke", "--path", sem, "--node", "lea"); len(got) != 1 || !strings.HasPrefix(got[0], "leases/") {
		t.Errorf("revoke --path %s --node lea completes to %q, want its lease", sem, got)
	}
	// A foreign client's contender whose name the shell would not take as
	// one plain word is not offered: entered as completed, `...` would run.
	foreignNode(t, conn, path+"/x`touch pwned`-lock-", nil)
	foreignNode(t, conn, path+"/$(id) x-lock-", nil)
	if got, _ = completePaths(t, nil, "revoke", "--path", path, "--node", ""); strings.Join(got, " ") != strings.Join(children, " ") {
		t.Errorf("with hostile names queued, revoke --path %s --node completes to %q, want only %q", path, got, children)
	}
	out, err := zklock(t, "__complete", "revoke", "--node", "").Output()
	if err != nil || strings.TrimSpace(string(out)) != ":4" {
		t.Errorf("revoke --node without --path: %v, %q; want nothing and no file names (:4)", err, out)
	}
}
