package recipe

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// A holder may record in its node when it took the lock (zklock's owner
// record has an "acquired" time): the node's own times say only when it
// joined the queue.

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
		return nil // recorded already (MarkAcquiredNow), or a revocation request
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

// MarkAcquiredNow records the acquisition time in our node (as MarkAcquired does,
// with data) and returns the server's time of that write: "now" on the
// leader's clock, to compare with a time the server recorded earlier
// without trusting this host's clock. If the node was written since we
// created it, the write was MarkAcquired's, made after we took the lock,
// and its mtime serves as well; or it was a revocation request, which
// stays in the node for the guard, and is returned as a *RevokedError.
func (l *Lease) MarkAcquiredNow(ctx context.Context, data []byte) (ServerTime, error) {
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
