package zkconn

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"
)

// ErrUnprotectedParent means a protected lock path was asked for under a
// parent that lets everyone delete its children: anyone could then delete
// the lock path while it is free, re-create it and own it.
var ErrUnprotectedParent = errors.New("cannot protect the lock path")

// protectedParentACL is for the parents that a protected run creates:
// everyone may read them and add lock paths of their own, but only the
// creator may delete what is in them.
var protectedParentACL = []zk.ACL{
	{Perms: zk.PermAll, Scheme: "auth", ID: ""},
	{Perms: zk.PermRead | zk.PermCreate, Scheme: "world", ID: "anyone"},
}

// CreatePathNode creates a node on the way to a lock (open: a parent) or the
// lock path itself. Normally that is a container (CreateContainer), which
// the server reaps once it is empty. With Options.Protect it is a persistent
// node: a reaped lock path could be re-created by anyone, with their ACL,
// so the creator's ACL would not hold across reaping. The lock path gets
// the client's ACL (the creator may do anything, everyone may read);
// parents get protectedParentACL. The lock path is only created under a
// parent that does not let everyone delete it.
func (c *Client) CreatePathNode(ctx context.Context, p string, open bool) error {
	if !c.protect {
		return c.CreateContainer(ctx, p, open)
	}
	acl := c.acl
	if open {
		acl = protectedParentACL
	} else if err := c.checkParent(ctx, path.Dir(p), p); err != nil {
		return err
	}
	_, err := call(ctx, func() (string, error) { return c.conn.Create(c.abs(p), nil, zk.FlagPersistent, acl) })
	return c.wrap(OpCreate, p, err)
}

// checkParent refuses a parent whose ACL grants DELETE to everyone.
func (c *Client) checkParent(ctx context.Context, parent, p string) error {
	acl, err := call(ctx, func() ([]zk.ACL, error) {
		acl, _, err := c.conn.GetACL(c.abs(parent))
		return acl, err
	})
	if err != nil {
		return c.wrap(OpRead, parent, err)
	}
	for _, a := range acl {
		if a.Scheme == "world" && a.ID == "anyone" && a.Perms&zk.PermDelete != 0 {
			// Paths as the connect string's chroot names them, like every
			// other message; the server's own path once, for the setAcl
			// an operator makes without the chroot.
			named := parent
			if c.chroot != "" {
				named = fmt.Sprintf("%s (%s on the server)", parent, c.abs(parent))
			}
			return fmt.Errorf("%w: %s lets everyone delete %s while it is free and re-create it as theirs; "+
				"give it an ACL without world delete first, e.g. world:anyone:rc", ErrUnprotectedParent, named, p)
		}
	}
	return nil
}
