package zkconn

import (
	"errors"
	"net"

	"github.com/go-zookeeper/zk"
)

var (
	// ErrUnavailable means no usable session: the ensemble could not be
	// reached within the connect timeout, or the connection stayed down.
	ErrUnavailable = errors.New("zookeeper unavailable")
	// ErrSessionLost means the session expired or was replaced by a new one,
	// so every ephemeral node and watch it held is gone.
	ErrSessionLost = errors.New("zookeeper session lost")
	// ErrPermission means the server refused an operation for lack of rights.
	ErrPermission = errors.New("permission denied")
	// ErrClosed means this client's own Close ended the session.
	ErrClosed = errors.New("zookeeper client closed")
)

// IsPermission reports whether err is the server refusing access.
func IsPermission(err error) bool {
	return errors.Is(err, ErrPermission) || isPermissionCode(err)
}

// IsConnectionLoss reports whether err means the request's fate is unknown
// because the connection dropped; the session may well survive it.
func IsConnectionLoss(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) || isWriteFailure(err)
}

// isWriteFailure reports whether err is the connection's own write error.
// go-zookeeper hands the request whose write failed the raw error (a
// reset or closed connection: "write: broken pipe") instead of
// ErrConnectionClosed, which the requests still queued get; it is the same
// loss, and the request may or may not have reached the server.
func isWriteFailure(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "write"
}

// IsSessionLoss reports whether err means the session itself is gone.
func IsSessionLoss(err error) bool {
	return errors.Is(err, ErrSessionLost) || errors.Is(err, zk.ErrSessionExpired) ||
		errors.Is(err, zk.ErrClosing) || errors.Is(err, ErrClosed)
}
