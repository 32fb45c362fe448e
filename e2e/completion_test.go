package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/zktest"
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

	// A name with a space is offered (the shell's completion script
	// quotes it); one with a bidi override or a line separator, which the
	// server allows and a terminal would obey rather than show, is not:
	// it could not be shown as it is, nor typed back.
	for _, p := range []string{base + "/gamma ray", base + "/g\u202eevil", base + "/g\u2028x"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %q: %v", p, err)
		}
	}
	got, _ = completePaths(t, nil, "run", "--path", base+"/g")
	if strings.Join(got, "|") != base+"/gamma ray" {
		t.Errorf("run --path %s/g completes to %q", base, got)
	}

	// The servers from a configuration file, none in the environment.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("servers = \""+server.ConnectString()+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = completePaths(t, []string{"ZKLOCK_SERVERS=", "ZKLOCK_CONFIG=" + cfg}, "tryrun", "--path", base+"/b")
	if strings.Join(got, " ") != base+"/beta" {
		t.Errorf("with the servers from %s: %q", cfg, got)
	}

	// Refused, and a server that accepts and never answers.
	silent := zktest.NewProxyT(t, server.Addrs()[0])
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
