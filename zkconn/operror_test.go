package zkconn

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestOpError: every error a request can meet reads as a sentence that
// names the path, and is classed so that the exit code is right.
func TestOpError(t *testing.T) {
	unknown := func(code int) error { return fmt.Errorf("unknown error: %d", code) }
	for _, tc := range []struct {
		op, path   string
		err        error
		want       string
		permission bool
		lost       bool
	}{
		{OpCreate, "/locks/a/_c_x-lock-", zk.ErrNoAuth, "permission denied: cannot create /locks/a/_c_x-lock-: the ACL of /locks/a does not let this client create nodes in it", true, false},
		{OpList, "/kafka", zk.ErrNoAuth, "permission denied: cannot list the children of /kafka: the ACL of /kafka does not let this client read it", true, false},
		{OpWrite, "/locks/a/n", zk.ErrNoAuth, "permission denied: cannot write /locks/a/n: the ACL of /locks/a/n does not let this client write it", true, false},
		{OpDelete, "/locks/a/n", zk.ErrNoAuth, "the ACL of /locks/a does not let this client delete nodes in it", true, false},
		{OpCreate, "/a", zk.ErrInvalidACL, "refused the node's ACL", true, false},
		{OpRead, "/a", zk.ErrAuthFailed, "rejected the credentials", true, false},
		{OpCreate, "/a", unknown(-124), "permission denied: cannot create /a: the server requires authentication (SASL, or a scheme of its enforce.auth.schemes) and closed the session", true, false},
		{OpRead, "/a", zk.ErrSessionExpired, "cannot read /a: the ZooKeeper session expired", false, true},
		{OpRead, "/a", zk.ErrConnectionClosed, "cannot read /a: the connection to ZooKeeper was lost", false, false},
		{OpCreate, "/a", writeFailed, "cannot create /a: the connection to ZooKeeper was lost", false, false},
		{OpCreate, "/e/n", zk.ErrNoChildrenForEphemerals, "/e is an ephemeral node", false, false},
		{OpCreate, "/a", unknown(-127), "throttles requests", false, false},
		{OpCreate, "/a", unknown(-125), "quota", false, false},
		{OpCreate, "/a", unknown(-120), "local session", false, false},
		{OpCreate, "/a", unknown(-119), "read-only", false, false},
		{OpCreate, "/a", unknown(-999), "cannot create /a: unknown error: -999", false, false},
	} {
		err := fmt.Errorf("outer: %w", &OpError{Op: tc.op, Path: tc.path, Err: tc.err})
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %q, want it to contain %q", tc.err, err, tc.want)
		}
		if IsPermission(err) != tc.permission || IsSessionLoss(err) != tc.lost || !errors.Is(err, tc.err) {
			t.Errorf("%v: permission %v, session loss %v", tc.err, IsPermission(err), IsSessionLoss(err))
		}
	}
}

// writeFailed is what go-zookeeper hands the request whose write found the
// connection reset (TestUnkeptSessionsEnd met it through a cut proxy).
var writeFailed = &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}

// TestWriteFailureIsConnectionLoss: a failed write loses the connection,
// not the session, and the request's fate is unknown, as for
// ErrConnectionClosed; a read or dial error is not classed so here.
func TestWriteFailureIsConnectionLoss(t *testing.T) {
	if !IsConnectionLoss(fmt.Errorf("create: %w", writeFailed)) || IsSessionLoss(writeFailed) {
		t.Errorf("a failed write: connection loss %v, session loss %v", IsConnectionLoss(writeFailed), IsSessionLoss(writeFailed))
	}
	if IsConnectionLoss(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}) {
		t.Error("a refused dial counted as a lost connection")
	}
}

// TestLossAfterAuthRefusal: a server that demands authentication answers
// only the first request of an unauthenticated connection, with -124, and
// closes the connection under the others. Whichever request met the reply
// (the keepalive's, often), the others read as the same refusal, not as a
// dropped connection.
func TestLossAfterAuthRefusal(t *testing.T) {
	c := &Client{wire: &wireTracker{}}
	if err := c.wrap(OpList, "/locks", zk.ErrConnectionClosed); IsPermission(err) {
		t.Errorf("a plain loss: %v, want no permission error", err)
	}
	c.wire.authRequired = true
	for _, lost := range []error{zk.ErrConnectionClosed, zk.ErrNoServer} {
		err := c.wrap(OpList, "/locks", lost)
		if !IsPermission(err) || !strings.Contains(err.Error(), "cannot list the children of /locks: the server requires authentication") {
			t.Errorf("%v after a -124 reply: %v, want the refusal", lost, err)
		}
	}
	if err := c.wrap(OpRead, "/a", zk.ErrNoNode); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("another error after a -124 reply: %v, want it kept", err)
	}
}
