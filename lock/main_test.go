package lock

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/zktest"
	"github.com/zklock/zklock/zkconn"
)

// One real server for the whole package: a JVM start costs seconds. Each
// test works under its own path.
var server *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.RunStandalone(m, zktest.Options{}, func(c *zktest.Cluster) { server = c }))
}

// testPath gives each test its own lock path.
func testPath(t *testing.T) string { return zktest.TestPath(t, "/t") + "/lock" }

func dial(t *testing.T, servers string, auth *zkconn.Auth) *zkconn.Client {
	t.Helper()
	cs, err := zkconn.ParseConnString(servers)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: 4 * time.Second, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func client(t *testing.T) *zkconn.Client { return dial(t, server.ConnectString(), nil) }

// raw is a plain go-zookeeper connection for looking at the server's state
// independently of the code under test.
func raw(t *testing.T) *zk.Conn { return zktest.DialT(t, server.Addrs()) }

// assertGone proves nothing is left: the lock path and its parent containers
// are reaped by the server once empty.
func assertGone(t *testing.T, path string) {
	t.Helper()
	conn := raw(t)
	zktest.Eventually(t, 10*time.Second, path+" to be reaped", func() bool {
		ok, _, err := conn.Exists(path)
		return err == nil && !ok
	})
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// awaitWatches waits until the server's wchp shows want data watches on the
// children of path, and returns wchp's map.
func awaitWatches(t *testing.T, ctx context.Context, addr, path string, want int) map[string][]int64 {
	t.Helper()
	var watched map[string][]int64
	zktest.Eventually(t, 10*time.Second, "every waiter to watch", func() bool {
		var err error
		watched, err = zktest.Wchp(ctx, addr)
		n := 0
		for p, s := range watched {
			if strings.HasPrefix(p, path+"/") {
				n += len(s)
			}
		}
		return err == nil && n == want
	})
	return watched
}
