package zktest

import (
	"bytes"
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

// eventually polls f until it returns true or the time is up.
func eventually(t *testing.T, within time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processAlive reports whether pid exists and is not a zombie. A zombie is
// dead; whether it is reaped is its (new) parent's business.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Format: pid (comm) state ...; comm may contain spaces and parens.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z'
}

var acl = zk.WorldACL(zk.PermAll)

// processExists reports whether pid has an entry in /proc at all; a child
// we killed but failed to reap would still show up, as a zombie.
func processExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
