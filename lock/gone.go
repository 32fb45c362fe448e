package lock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// NodeGoneError means one of our lock nodes vanished while our session
// lived: an operator's deleteall, or a script that deleted it. Its place in
// the queue is gone with it, so whoever holds that error holds nothing there;
// sequence numbers only grow, so a new node would join at the back.
type NodeGoneError struct {
	Path string // the lock path
	Node string // the node that is gone
}

func (e *NodeGoneError) Error() string {
	return fmt.Sprintf("%s lost its place: node %s was deleted", e.Path, e.Node)
}

func (e *NodeGoneError) Unwrap() error { return ErrNodeGone }

// Verify checks, with one request, that our node still exists, belongs
// to this session and was not asked to give up its place. A node held for
// a while (the first of several paths, while the others were being waited
// for) must be checked again before the command starts: someone may have
// deleted it, and someone else taken the lock meanwhile, or revoked it.
func (l *Lease) Verify(ctx context.Context) error {
	data, st, err := l.c.Get(ctx, l.Node)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return l.goneErr()
	case err != nil:
		return err
	case st.EphemeralOwner != l.c.SessionID():
		return l.goneErr()
	case isRevokeRequest(data):
		return l.revokedErr(ctx, st)
	}
	l.ownChanged = false
	return nil
}

// VerifyAll checks every lease but the last with Verify, all at once (one
// round trip in all), and the last one only against what its own watch has
// said: Acquire has just seen that node, and on a handoff its own watch
// would already have brought news of a deletion. It returns the first
// failure, in the order of leases.
func VerifyAll(ctx context.Context, leases []*Lease) error {
	if len(leases) == 0 {
		return nil
	}
	last := leases[len(leases)-1]
	errs := make([]error, len(leases)-1)
	var wg sync.WaitGroup
	for i, l := range leases[:len(leases)-1] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Verify(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if !last.ownIntact() || last.ownChanged {
		return last.Verify(ctx)
	}
	return nil
}

// Waited reports whether Acquire had to wait for another contender: only
// then is the node's creation time not the time the lock was taken.
func (l *Lease) Waited() bool { return l.waited }

// MarkAcquired records in our node when we took the lock, so that list,
// holders and a busy or timed-out waiter can say since when it is held,
// after we had to wait (the node's own times say only when we joined). It
// rewrites the node's data with data, which says when (zklock's owner
// record with its acquisition time set to now). The write fires the
// data watch of the waiter behind us, which watches us again without
// listing the queue: one request of the next waiter's, while we hold, and
// none on anyone's handoff. A lock taken on joining is not recorded: there
// the time it joined is the time it took the lock, and an uncontended run
// stays one create, one listing and one close.
func (l *Lease) MarkAcquired(ctx context.Context, data []byte) error {
	if !l.waited {
		return nil
	}
	_, err := l.writeAcquired(ctx, data)
	if errors.Is(err, zk.ErrBadVersion) {
		return nil // recorded already (Stamp), or a revocation request
	}
	return err
}

// writeAcquired rewrites our node's data with data, only over the data we
// created the node with (version 0): a revocation request written since
// must stay for the guard to see, and an acquisition already recorded
// needs no second write.
func (l *Lease) writeAcquired(ctx context.Context, data []byte) (*zk.Stat, error) {
	return l.c.SetVersion(ctx, l.Node, data, 0)
}

// Stamp records the acquisition time in our node (as MarkAcquired does,
// with data) and returns the server's time of that write: "now" on the
// leader's clock, to compare with a time the server recorded earlier
// without trusting this host's clock. If the node was written since we
// created it, the write was MarkAcquired's, made after we took the lock,
// and its mtime serves as well; or it was a revocation request, which
// stays in the node for the guard, and is returned as a *RevokedError.
func (l *Lease) Stamp(ctx context.Context, data []byte) (ServerTime, error) {
	st, err := l.writeAcquired(ctx, data)
	if errors.Is(err, zk.ErrBadVersion) {
		var got []byte
		got, st, err = l.c.Get(ctx, l.Node)
		if err == nil && isRevokeRequest(got) {
			return ServerTime{}, l.revokedErr(ctx, st)
		}
	}
	if err != nil {
		return ServerTime{}, err
	}
	return Modified(st), nil
}

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
