package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// SuccessRecord is the name of the node, a child of the lock path, in which
// zklock records the last successful run under that lock. It is persistent,
// so the lock path (a container) is not reaped while the record exists and
// the record lives as long as the lock path. Keeping it inside the lock path
// rather than beside it gives it the lock path's ACL: under credentials, and
// with --protect, only the lock's owner may create it, so no other identity
// can forge a recent success to make a job skip.
//
// The name is no contender's: it has no sequence suffix, so zklock and
// Kazoo ignore it, and it holds none of Curator's markers ("lock-",
// "__READ__", "__WRIT__"), so Curator sorts it by its whole name, after every
// ten-digit sequence number, where it never comes before a contender.
const SuccessRecord = "zklock.last-success"

// Success is the last successful run recorded at a lock path.
type Success struct {
	Path string
	// At is when the record was written, on the server's clock (the
	// node's mtime, set by the leader): comparable across hosts.
	At time.Time
	// Epoch is the epoch of the leader whose clock dated At (see
	// ServerTime).
	Epoch uint32
	// NodeData says who ran it: a zklock Owner, or text. A zklock's Owner
	// carries Written, its host's clock at the write.
	NodeData
}

// Dated is the record's time as a ServerTime.
func (s Success) Dated() ServerTime { return ServerTime{At: s.At, Epoch: s.Epoch} }

// ServerTime is a time on the ensemble's clock, read off a write: the
// node's mtime, which the leader sets from its own wall clock when it
// proposes the write, and the epoch of that leader, the high 32 bits of
// the write's zxid. Every election starts a new epoch, so two times of one
// epoch were read off one server's clock, and their difference is exact
// whatever that clock's offset; two times of different epochs may come
// from two servers whose clocks disagree.
type ServerTime struct {
	At    time.Time
	Epoch uint32
}

// modified is the ServerTime of the last write to the node whose stat is st.
func modified(st *zk.Stat) ServerTime {
	return ServerTime{At: time.UnixMilli(st.Mtime).UTC(), Epoch: uint32(uint64(st.Mzxid) >> 32)}
}

// LastSuccess reads the success record at path; ok is false when there is
// none.
func LastSuccess(ctx context.Context, c *zkconn.Client, path string) (s Success, ok bool, err error) {
	data, st, err := c.Get(ctx, zkconn.Join(path, SuccessRecord))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return Success{}, false, nil
	case err != nil:
		return Success{}, false, err
	}
	return successOf(path, data, st), true, nil
}

// successOf is the record read at path as data with stat st.
func successOf(path string, data []byte, st *zk.Stat) Success {
	t := modified(st)
	return Success{Path: path, At: t.At, Epoch: t.Epoch, NodeData: DecodeNodeData(data)}
}

// forgetRounds bounds how often ForgetSuccess reads the record again
// because a newer success was written between its read and its delete.
// Each round needs a whole run to succeed in that window, so running out
// means the record is being rewritten continuously.
const forgetRounds = 5

// ErrSuccessChurn means the success record kept being rewritten between
// ForgetSuccess's read and its delete, more often than forgetRounds allows.
var ErrSuccessChurn = errors.New("the success record kept being rewritten")

// forgetRead, when set (by tests), runs between ForgetSuccess's read of
// the record and its delete: the window in which a newer success may be
// recorded.
var forgetRead func()

// ForgetSuccess deletes the success record at path and returns what it
// deleted; ok is false when there was none to delete. It deletes the
// version it read, so that it reports the record it removed: if a newer
// success was recorded meanwhile, it reads that one and deletes it instead.
// A record deleted by someone else first is nothing to forget.
func ForgetSuccess(ctx context.Context, c *zkconn.Client, path string) (s Success, ok bool, err error) {
	node := zkconn.Join(path, SuccessRecord)
	for round := 0; round < forgetRounds; round++ {
		data, st, err := c.Get(ctx, node)
		if errors.Is(err, zk.ErrNoAuth) {
			// Written by another identity with an ACL of its own: the
			// delete needs only the lock path's ACL, and exists reads
			// no data, so forget it by its time alone.
			var found bool
			data = nil
			found, st, err = c.Exists(ctx, node)
			if err == nil && !found {
				err = zk.ErrNoNode
			}
		}
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return Success{}, false, nil
		case err != nil:
			return Success{}, false, err
		}
		if forgetRead != nil {
			forgetRead()
		}
		err = c.DeleteVersion(ctx, node, st.Version)
		switch {
		case err == nil:
			return successOf(path, data, st), true, nil
		case errors.Is(err, zk.ErrNoNode):
			return Success{}, false, nil
		case !errors.Is(err, zk.ErrBadVersion):
			return Success{}, false, err
		}
	}
	return Success{}, false, fmt.Errorf("%w at %s (%d times)", ErrSuccessChurn, path, forgetRounds)
}

// RecordSuccess writes the success record at path, created on its first
// success, and returns the server's time of the write. Call it while the
// lock is held, so that the next holder sees it. The record carries this
// host's clock at the write (Owner.Written), which a later run compares
// with the server's dates when they come from different leaders.
func RecordSuccess(ctx context.Context, c *zkconn.Client, path string, o Owner) (time.Time, error) {
	node := zkconn.Join(path, SuccessRecord)
	o.Written = time.Now().UTC().Truncate(time.Millisecond)
	data := o.Encode()
	for {
		st, err := c.SetVersion(ctx, node, data, -1)
		if err == nil {
			return time.UnixMilli(st.Mtime).UTC(), nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return time.Time{}, err
		}
		_, err = c.Create(ctx, node, data, 0)
		if err == nil {
			// A create's mtime is its ctime: read it back, as the reply
			// carries only the name.
			s, ok, err := LastSuccess(ctx, c, path)
			if err == nil && !ok {
				err = zk.ErrNoNode
			}
			return s.At, err
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return time.Time{}, err
		}
		// Created meanwhile by another holder's session that lost its
		// lock: write over it.
	}
}

// Stamp records the acquisition time in our node (as MarkAcquired does)
// and returns the server's time of that write: "now" on the leader's
// clock, to compare with a success record's time without trusting this
// host's clock. If the node was written since we created it, the write was
// MarkAcquired's, made after we took the lock, and its mtime serves as
// well; or it was a revocation request, which stays in the node for the
// guard, and is returned as a *RevokedError.
func (l *Lease) Stamp(ctx context.Context, o Owner) (ServerTime, error) {
	st, err := l.writeAcquired(ctx, o)
	if errors.Is(err, zk.ErrBadVersion) {
		var data []byte
		data, st, err = l.c.Get(ctx, l.Node)
		if err == nil && isRevokeRequest(data) {
			return ServerTime{}, l.revokedErr(ctx, st)
		}
	}
	if err != nil {
		return ServerTime{}, err
	}
	return modified(st), nil
}
