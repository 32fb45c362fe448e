package recipe

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// A cancelling contender (Supersede.Cancel, GitHub's cancel-in-progress)
// supersedes the waiters ahead and stops the holder too. It does both by
// revoking, as zklock revoke does, every contender ahead that it beats,
// once, right after its first listing: a contender ahead of it exists by
// then (sequence numbers only grow), so no later listing shows one that
// was not asked.
//
// Revoking rather than telling the waiters to leave closes the window in
// which a waiter takes the lock just as it is told: a waiter reads its own
// data before it lists, so it sees the request and leaves without running;
// one that took the lock a moment before is a holder, whose guard sees the
// request in its node and stops its command (its kill grace, then the whole
// process group) before it releases. Either way the canceller waits only
// for node deletions, and its command starts after the holder's tree is
// gone. A waiter that leaves for it says "superseded", a holder "revoked".
//
// Who asked is recorded in the lock path's data, as by revoke, with the
// superseder named in it: a waiter turns that into a *SupersededError. A
// holder with a higher order key is not ours to stop: the canceller waits
// behind it like any superseding contender.

// cancelAhead revokes the contenders ahead of us (q[:idx]) that we beat.
func (l *Lease) cancelAhead(ctx context.Context, q []Contender, idx int, me Superseder) error {
	by := Requester()
	by.Supersede = &me
	for i := range q[:idx] {
		data, _, err := l.c.Get(ctx, zkconn.Join(l.Path, q[i].Name))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		if isRevokeRequest(data) {
			continue // asked already
		}
		if theirs, ok := supersedeOf(data); ok && !l.supersede.beats(theirs) {
			continue // a higher key
		}
		if _, err := Revoke(ctx, l.c, l.Path, q[i].Name, by); err != nil {
			return err
		}
	}
	return nil
}

// supersededWaiter turns a revocation that a cancelling contender asked of
// us while we waited into what it is for a waiter: superseded.
func supersededWaiter(err error) error {
	var r *RevokedError
	if errors.As(err, &r) && r.Supersede != nil {
		return &SupersededError{Path: r.Path, Node: r.Node, By: *r.Supersede}
	}
	return err
}
