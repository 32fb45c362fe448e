package runner

import (
	"context"
	"os"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// inherited is a lock that an ancestor zklock holds and this one re-enters:
// it runs its command under the ancestor's node, without a node of its own.
type inherited struct {
	hold
	Token int64 // the ancestor's node's creation zxid
}

// reenter sorts the paths asked for into those an ancestor zklock holds in
// a mode that covers this request, and those this zklock must take itself.
// An entry of EnvHeld counts only when the zklock it names is an ancestor of
// this process and, on the server, its node still exists, belongs to the
// session it names, and was written by that zklock on this host: a stale or
// copied environment takes the normal path. The mode held is the node's,
// whatever the entry says.
// The ancestor's node is only read and watched (see Run), never written.
//
// Paths are compared on the server, chroot included (EnvHeld names nodes
// by their full path): `--servers S run --path /re/x` and, inside it,
// `--servers S/re run --path /x` ask for one node.
func (o *Options) reenter(ctx context.Context, c *zkconn.Client) (in []inherited, take []string, err error) {
	holds := parseHeld(os.Getenv(EnvHeld))
	for _, p := range o.Paths {
		h, found := holdAt(holds, serverPath(c.Chroot(), p))
		if !found {
			take = append(take, p)
			continue
		}
		h.Node = clientPath(c.Chroot(), h.Node)
		if !isAncestor(h.PID) {
			o.logf("%s: %s names pid %d, which is not an ancestor of this zklock; taking the lock", p, EnvHeld, h.PID)
			take = append(take, p)
			continue
		}
		node, ok, err := recipe.HeldBy(ctx, c, h.Node, h.Session)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			o.logf("%s: the ancestor's node %s no longer belongs to session 0x%x; taking the lock", p, h.Node, h.Session)
			take = append(take, p)
			continue
		}
		// A pid names a process only on its own host, and only while it
		// lives: an entry copied from another host or container, whose
		// holder's pid happens to be an ancestor's here, names a node that
		// another process holds. Containers share a host name (host
		// networking) and number their processes alike: the pid must be
		// of this PID namespace too.
		if d := owner.Decode(node.Data); !d.ByZklock || d.Owner.PID != h.PID || d.Owner.Host != hostname() || !d.Owner.SamePIDNamespace() {
			o.logf("%s: the node %s was not written by zklock pid %d on this host; taking the lock", p, h.Node, h.PID)
			take = append(take, p)
			continue
		}
		if node.Mode != h.Mode {
			o.logf("%s: %s says %s, but the node %s is held %s", p, EnvHeld, modeName(h.Mode), h.Node, modeName(node.Mode))
			h.Mode = node.Mode
		}
		token := node.Czxid
		if !covers(h.Mode, o.Mode) {
			if h.Mode.Kind() == recipe.Shared && o.Mode.Kind() == recipe.Exclusive {
				// It would queue behind its own ancestor's read lock,
				// which is released only after this zklock exits.
				return nil, nil, &UpgradeError{Path: p, PID: h.PID}
			}
			take = append(take, p) // the normal path refuses the mismatch
			continue
		}
		o.logf("re-entered %s: held %s by zklock pid %d (node %s, session 0x%x)", p, modeName(h.Mode), h.PID, h.Node, h.Session)
		in = append(in, inherited{hold: h, Token: token})
	}
	return in, take, nil
}

// hostname is this host's name as zklock writes it into its nodes.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

func holdAt(hs []hold, path string) (hold, bool) {
	for _, h := range hs {
		if h.Path() == path {
			return h, true
		}
	}
	return hold{}, false
}
