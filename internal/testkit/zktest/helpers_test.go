package zktest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// connect opens a go-zookeeper session and waits until it is established.
func connect(t *testing.T, servers []string, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	c, ev, err := zk.Connect(servers, timeout, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	waitState(t, ev, zk.StateHasSession, 10*time.Second)
	return c, ev
}

// waitState consumes session events until one reaches want.
func waitState(t *testing.T, ev <-chan zk.Event, want zk.State, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case e, ok := <-ev:
			if !ok {
				t.Fatalf("event channel closed while waiting for %v", want)
			}
			if e.Type == zk.EventSession && e.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within %v", want, within)
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var acl = zk.WorldACL(zk.PermAll)

// processExists reports whether pid has an entry in /proc at all; a child
// we killed but failed to reap would still show up, as a zombie.
func processExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
