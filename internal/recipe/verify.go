package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
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
