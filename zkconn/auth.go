package zkconn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// ErrBadAuth marks an --auth value that cannot be parsed.
var ErrBadAuth = errors.New("bad auth")

// Auth is a scheme and its credentials, as given to addAuth.
type Auth struct {
	Scheme      string
	Credentials string
}

// ParseAuth parses "digest:user:password" (the only scheme whose
// credentials a command line can carry).
func ParseAuth(s string) (Auth, error) {
	scheme, cred, ok := strings.Cut(s, ":")
	if !ok || scheme == "" {
		return Auth{}, fmt.Errorf("%w: want digest:user:password", ErrBadAuth)
	}
	if scheme != "digest" {
		return Auth{}, fmt.Errorf("%w: scheme %q is not supported; use digest:user:password", ErrBadAuth, scheme)
	}
	user, pass, ok := strings.Cut(cred, ":")
	if !ok || user == "" || pass == "" {
		return Auth{}, fmt.Errorf("%w: want digest:user:password", ErrBadAuth)
	}
	return Auth{Scheme: scheme, Credentials: cred}, nil
}

// User is the identity part of the credentials, safe to print.
func (a Auth) User() string {
	u, _, _ := strings.Cut(a.Credentials, ":")
	return u
}

// ACL returns the ACL for the nodes zklock creates. Without auth everything
// is open, as with any ZooKeeper client. With auth the creator keeps every
// right and everyone else may only read: `list` and `holders` keep working
// for other users, but nobody else can queue under a lock path or delete a
// holder's node (deleting a child needs DELETE on its parent).
func (a *Auth) ACL() []zk.ACL {
	if a == nil {
		return zk.WorldACL(zk.PermAll)
	}
	return []zk.ACL{
		{Perms: zk.PermAll, Scheme: "auth", ID: ""},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}
}
