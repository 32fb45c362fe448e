package zkconn

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Operations named in an OpError.
const (
	OpCreate = "create"
	OpRead   = "read"
	OpList   = "list the children of"
	OpCheck  = "check"
	OpDelete = "delete"
	OpWrite  = "write"
)

// Server error codes that go-zookeeper does not know: it reports them as
// "unknown error: N". Numbers from ZooKeeper's KeeperException.Code.
const (
	codeUnknownSession      = -12
	codeNotReadOnly         = -119
	codeEphemeralOnLocal    = -120
	codeRequestTimeout      = -122
	codeSessionRequiresAuth = -124 // SESSIONCLOSEDREQUIRESASLAUTH: enforce.auth.enabled
	codeQuotaExceeded       = -125
	codeThrottled           = -127
	codeUnknownPrefix       = "unknown error: "
)

// OpError is a request the server (or the connection) failed: what was
// asked, on which path, and why, in one sentence that says what to check.
// errors.Is sees through it to go-zookeeper's error and to zklock's class
// (ErrPermission, ErrSessionLost), which decide the exit code.
type OpError struct {
	Op   string // one of the Op constants
	Path string // the path asked for, as the caller wrote it (under the chroot)
	Err  error  // go-zookeeper's error
}

// Code is the server's error code for e, when go-zookeeper left it as a
// number (0 otherwise).
func (e *OpError) Code() int { return unknownCode(e.Err) }

func unknownCode(err error) int {
	if err == nil {
		return 0
	}
	s, ok := strings.CutPrefix(err.Error(), codeUnknownPrefix)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// refused is the node whose ACL decides op on p: a create or a delete
// needs a right on the parent, a read on the node itself.
func refused(op, p string) string {
	if op == OpCreate || op == OpDelete {
		return path.Dir(p)
	}
	return p
}

func (e *OpError) Error() string {
	what := fmt.Sprintf("cannot %s %s", e.Op, e.Path)
	switch {
	case errors.Is(e.Err, zk.ErrNoAuth):
		right := map[string]string{OpCreate: "create nodes in it", OpDelete: "delete nodes in it", OpWrite: "write it"}[e.Op]
		if right == "" {
			right = "read it"
		}
		return fmt.Sprintf("permission denied: %s: the ACL of %s does not let this client %s", what, refused(e.Op, e.Path), right)
	case errors.Is(e.Err, zk.ErrAuthFailed):
		return fmt.Sprintf("permission denied: %s: the server rejected the credentials", what)
	case errors.Is(e.Err, zk.ErrInvalidACL):
		return fmt.Sprintf("permission denied: %s: the server refused the node's ACL (an ACL for the creator needs an authenticated session)", what)
	case errors.Is(e.Err, zk.ErrSessionExpired), errors.Is(e.Err, zk.ErrClosing):
		return fmt.Sprintf("%s: the ZooKeeper session expired", what)
	case errors.Is(e.Err, zk.ErrConnectionClosed), isWriteFailure(e.Err):
		return fmt.Sprintf("%s: the connection to ZooKeeper was lost", what)
	case errors.Is(e.Err, zk.ErrNoServer):
		return fmt.Sprintf("%s: no ZooKeeper server could be reached", what)
	case errors.Is(e.Err, zk.ErrSessionMoved):
		return fmt.Sprintf("%s: the session moved to another server while the request was on its way", what)
	case errors.Is(e.Err, zk.ErrNoChildrenForEphemerals):
		return fmt.Sprintf("%s: %s is an ephemeral node, which cannot have children", what, path.Dir(e.Path))
	case errors.Is(e.Err, zk.ErrNoNode):
		return fmt.Sprintf("%s: the node does not exist", what)
	case errors.Is(e.Err, zk.ErrNodeExists):
		return fmt.Sprintf("%s: the node already exists", what)
	case errors.Is(e.Err, zk.ErrNotEmpty):
		return fmt.Sprintf("%s: the node has children", what)
	case errors.Is(e.Err, zk.ErrBadArguments):
		return fmt.Sprintf("%s: the server calls the request invalid", what)
	case errors.Is(e.Err, zk.ErrAPIError), errors.Is(e.Err, zk.ErrUnknown):
		return fmt.Sprintf("%s: the server does not support the request (ZooKeeper 3.5 or newer is needed)", what)
	}
	switch e.Code() {
	case codeSessionRequiresAuth:
		return fmt.Sprintf("permission denied: %s: the server requires authentication (SASL, or a scheme of its enforce.auth.schemes) and closed the session", what)
	case codeThrottled:
		return fmt.Sprintf("%s: the server is overloaded and throttles requests; retry later", what)
	case codeQuotaExceeded:
		return fmt.Sprintf("%s: a ZooKeeper quota above %s is exceeded", what, e.Path)
	case codeRequestTimeout:
		return fmt.Sprintf("%s: the request timed out on the server", what)
	case codeNotReadOnly:
		return fmt.Sprintf("%s: the server is read-only, cut off from the rest of the ensemble", what)
	case codeEphemeralOnLocal:
		return fmt.Sprintf("%s: the server gave this client a local session, which cannot own ephemeral nodes (enable localSessionsUpgradingEnabled)", what)
	case codeUnknownSession:
		return fmt.Sprintf("%s: the server does not know this session", what)
	}
	return fmt.Sprintf("%s: %s", what, strings.TrimPrefix(e.Err.Error(), "zk: "))
}

// Unwrap exposes go-zookeeper's error and zklock's class of it.
func (e *OpError) Unwrap() []error {
	errs := []error{e.Err}
	switch {
	case isPermissionCode(e.Err):
		errs = append(errs, ErrPermission)
	case errors.Is(e.Err, zk.ErrSessionExpired), errors.Is(e.Err, zk.ErrClosing):
		errs = append(errs, ErrSessionLost)
	}
	return errs
}

func isPermissionCode(err error) bool {
	return errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrAuthFailed) ||
		errors.Is(err, zk.ErrInvalidACL) || unknownCode(err) == codeSessionRequiresAuth
}
