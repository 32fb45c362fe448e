package zktest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

type silentLogger struct{}

func (silentLogger) Printf(string, ...any) {}

// Dial opens a plain go-zookeeper session, independent of the code under
// test, for looking at the server's state (children, stats, ACLs). It waits
// for the session under ctx.
func Dial(ctx context.Context, addrs []string) (*zk.Conn, error) {
	return dialSession(ctx, addrs, 4*time.Second)
}

func dialSession(ctx context.Context, addrs []string, session time.Duration) (*zk.Conn, error) {
	conn, _, err := zk.Connect(addrs, session, zk.WithLogInfo(false), zk.WithLogger(silentLogger{}))
	if err != nil {
		return nil, err
	}
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("zktest: no session with %v: %w", addrs, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return conn, nil
}

// DialT is Dial for a test: it fails the test on error and closes the
// session when the test ends.
func DialT(tb TB, addrs []string) *zk.Conn {
	tb.Helper()
	return DialTSession(tb, addrs, 4*time.Second)
}

// DialTSession is DialT with a session timeout of its own. go-zookeeper
// gives up on a connection whose reply takes two thirds of the session
// timeout, so a test that sends one large request (thousands of creates
// in a multi) gives it a session that outlasts the request on a loaded
// machine, where 4s would not.
func DialTSession(tb TB, addrs []string, session time.Duration) *zk.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dialSession(ctx, addrs, session)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(conn.Close)
	return conn
}

// Eventually polls cond every 20ms until it holds, and fails the test if it
// does not within the given time. Tests poll for the state they expect
// rather than sleeping and hoping.
func Eventually(tb TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var pathSeq atomic.Int64

// TestPath gives a test a lock path of its own under root, named after the
// test, so tests sharing one server never meet.
func TestPath(tb TB, root string) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name())
	return fmt.Sprintf("%s/%s-%d", root, name, pathSeq.Add(1))
}

// ExitCode is a finished command's exit status: its code when it ran and
// exited, or the error when it could not be run or waited for.
func ExitCode(err error) (int, error) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

// ExitCodeT is ExitCode for a test: a command that could not be run or
// waited for fails the test.
func ExitCodeT(tb TB, err error) int {
	tb.Helper()
	code, err := ExitCode(err)
	if err != nil {
		tb.Fatal(err)
	}
	return code
}
