package recipe

import (
	"context"
	"errors"
	"path"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// HeldNode is what the server says of a holder's node: its creation zxid
// (its fencing token), the mode its name takes, and its data.
type HeldNode struct {
	Czxid int64
	// Mode is the node's own: its name says exclusive, shared or lease (a
	// lease's limit is the one its zklock wrote in the data).
	Mode Mode
	Data []byte
}

// HeldBy reports, with one request, whether node exists, belongs to
// session and is a contender's node, and returns what it holds. A zklock
// that an ancestor's lock covers checks the ancestor's node with it, and
// never touches the node itself: the node, not the description of it that
// it was handed, says which mode is held and by which process.
func HeldBy(ctx context.Context, c *zkconn.Client, node string, session int64) (h HeldNode, ok bool, err error) {
	data, st, err := c.Get(ctx, node)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return HeldNode{}, false, nil
	case err != nil:
		return HeldNode{}, false, err
	case st.EphemeralOwner != session:
		return HeldNode{}, false, nil
	}
	ct, isContender := ParseContender(path.Base(node))
	if !isContender {
		return HeldNode{}, false, nil
	}
	h = HeldNode{Czxid: st.Czxid, Data: data}
	switch ct.Kind {
	case SemaphoreLease:
		d, ok := declaration(data)
		if path.Base(path.Dir(node)) != semLeases || !ok || d.Limit < 1 {
			return HeldNode{}, false, nil
		}
		h.Mode = ModeLimit(d.Limit)
	case Shared:
		h.Mode = ModeShared
	default:
		h.Mode = ModeExclusive
	}
	return h, true, nil
}
