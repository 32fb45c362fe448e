package e2e

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestExporterServersAway: zklock exporter, cut from the servers, keeps
// serving with zklock_exporter_up 0 while its watches are gone from the
// server; once they are back (on the old session or, if it expired
// meanwhile, a new one) it sets its watches again, reports up 1 and
// shows a lock that appeared meanwhile. It ends with exit 0 on SIGTERM.
// In a child process: a new session re-arming watches runs into
// go-zookeeper's own race, which the race detector reports in-process
// (docs/testing.md).
func TestExporterServersAway(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	addr := server(t).Addrs()[0]
	proxy := zktest.NewProxyT(t, addr)
	c := zklock(t, "--servers", proxy.Addr(), "--session-timeout", "2s", "-v",
		"exporter", "--path", path, "--listen", "127.0.0.1:0")
	var stderr syncBuffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	t.Cleanup(func() {
		c.Process.Kill()
		<-exited
	})
	serving := regexp.MustCompile(`serving /metrics on (http://\S+/metrics)`)
	var url string
	zktest.Eventually(t, 20*time.Second, "the exporter to listen", func() bool {
		m := serving.FindStringSubmatch(stderr.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	page := func() string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	has := func(lines ...string) func() bool {
		return func() bool {
			p := page()
			for _, l := range lines {
				if !strings.Contains(p, "\n"+l+"\n") {
					return false
				}
			}
			return true
		}
	}
	watched := func() int {
		w, err := zktest.Wchp(t.Context(), addr)
		if err != nil {
			t.Fatal(err)
		}
		return len(w[path])
	}
	// The path does not exist yet: an existence watch on it (a data
	// watch, which wchp lists).
	zktest.Eventually(t, 20*time.Second, "up, watching the path", func() bool {
		return has("zklock_exporter_up 1")() && watched() == 1
	})

	proxy.Cut()
	zktest.Eventually(t, 20*time.Second, "up 0 while cut", has("zklock_exporter_up 0"))
	zktest.Eventually(t, 20*time.Second, "its watch gone from the server", func() bool { return watched() == 0 })
	// A lock path appears while the exporter is blind.
	for i := 1; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			if _, err := conn.Create(path[:i], nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
				t.Fatal(err)
			}
		}
	}
	if _, err := conn.Create(path+"/"+curatorContender, []byte("10.1.2.3"), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	proxy.Heal()
	zktest.Eventually(t, 30*time.Second, "up again on a new session, showing the holder", has(
		"zklock_exporter_up 1",
		`zklock_exporter_session_state{state="connected"} 1`,
		`zklock_lock_holders{path="`+path+`"} 1`,
		`zklock_lock_holder_info{path="`+path+`",host="10.1.2.3",pid="",command="",flavor="curator"} 1`))

	c.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err
		if code := exitCodeOf(t, err); code != 0 {
			t.Errorf("exit %d on SIGTERM, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20s after SIGTERM")
	}
}
