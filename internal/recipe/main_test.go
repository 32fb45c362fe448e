package recipe

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

func TestMain(m *testing.M) {
	shared.SkipExamplesWhenShort() // they need the server
	shared.Main(m)
}

// The tests share one server, started by the first test that needs it
// (see shared); each works under its own path.
func testPath(t *testing.T) string { return shared.Path(t) }

func dial(t *testing.T, servers string, auth *zkconn.Auth) *zkconn.Client {
	return shared.Dial(t, servers, auth)
}

func client(t *testing.T) *zkconn.Client { return shared.Client(t) }

// raw is a plain go-zookeeper connection for looking at the server's state
// independently of the code under test.
func raw(t *testing.T) *zk.Conn { return shared.Raw(t) }

func assertGone(t *testing.T, path string) { shared.AssertGone(t, path) }

func ctxT(t *testing.T, d time.Duration) context.Context { return shared.Ctx(t, d) }

// zklockData is node data as a zklock writes it, as far as the recipes
// read it (see declared): limit is a semaphore's, or 0.
func zklockData(limit int) []byte {
	return fmt.Appendf(nil, `{"zklock":"test","host":"h","pid":1,"cmd":["x"],"limit":%d}`, limit)
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
