// Package success keeps the record of a job's last successful run under a
// lock path, which --once-per reads to skip a run within its window.
package success

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// NodeName is the name of the node, a child of the lock path, in which
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
const NodeName = "zklock.last-success"

// CheckPath refuses a lock path below a success record. The record would
// turn into its parent: the lock's nodes would make the record look recent
// to the job that keeps it, and, the record being a container then, the
// server would reap it, and the job's success with it, once they are gone.
func CheckPath(p string) error {
	for _, c := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if c == NodeName {
			return fmt.Errorf("%w: %q has a component %s, the name of a lock path's success record", zkconn.ErrBadPath, p, NodeName)
		}
	}
	return nil
}

// Record is the last successful run recorded at a lock path.
type Record struct {
	Path string
	// At is when the record was written, on the server's clock (the
	// node's mtime, set by the leader): comparable across hosts.
	At time.Time
	// Epoch is the epoch of the leader whose clock dated At (see
	// recipe.ServerTime).
	Epoch uint32
	// NodeData says who ran it: a zklock's owner record, or text. A
	// zklock's carries Written, its host's clock at the write.
	owner.NodeData
}

// Read reads the success record at path; ok is false when there is none.
func Read(ctx context.Context, c *zkconn.Client, path string) (s Record, ok bool, err error) {
	data, st, err := c.Get(ctx, zkconn.Join(path, NodeName))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return Record{}, false, nil
	case err != nil:
		return Record{}, false, err
	}
	return successOf(path, data, st), true, nil
}

// Of is the record at path whose node was read as data with stat st, for
// a caller that read it itself (with a watch, say).
func Of(path string, data []byte, st *zk.Stat) Record { return successOf(path, data, st) }

// successOf is the record read at path as data with stat st.
func successOf(path string, data []byte, st *zk.Stat) Record {
	t := recipe.Modified(st)
	return Record{Path: path, At: t.At, Epoch: t.Epoch, NodeData: owner.Decode(data)}
}

// forgetRounds bounds how often Forget reads the record again
// because a newer success was written between its read and its delete.
// Each round needs a whole run to succeed in that window, so running out
// means the record is being rewritten continuously.
const forgetRounds = 5

// ErrChurn means the success record kept being rewritten between
// Forget's read and its delete, more often than forgetRounds allows.
var ErrChurn = errors.New("the success record kept being rewritten")

// forgetRead, when set (by tests), runs between Forget's read of
// the record and its delete: the window in which a newer success may be
// recorded.
var forgetRead func()

// Forget deletes the success record at path and returns what it
// deleted; ok is false when there was none to delete. It deletes the
// version it read, so that it reports the record it removed: if a newer
// success was recorded meanwhile, it reads that one and deletes it instead.
// A record deleted by someone else first is nothing to forget.
func Forget(ctx context.Context, c *zkconn.Client, path string) (s Record, ok bool, err error) {
	node := zkconn.Join(path, NodeName)
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
			return Record{}, false, nil
		case err != nil:
			return Record{}, false, err
		}
		if forgetRead != nil {
			forgetRead()
		}
		err = c.DeleteVersion(ctx, node, st.Version)
		switch {
		case err == nil:
			return successOf(path, data, st), true, nil
		case errors.Is(err, zk.ErrNoNode):
			return Record{}, false, nil
		case !errors.Is(err, zk.ErrBadVersion):
			return Record{}, false, err
		}
	}
	return Record{}, false, fmt.Errorf("%w at %s (%d times)", ErrChurn, path, forgetRounds)
}

// Write writes the success record at path, created on its first
// success, and returns the server's time of the write. Call it while the
// lock is held, so that the next holder sees it. The record carries
// hostNow, this host's clock read just before the write (Owner.Written):
// a later run compares it with the record's date on the server's clock,
// so that a clock that stepped or servers that disagree keep the record
// young rather than old (see runner's recordAge). A test passes a skewed
// hostNow to stand for a writer whose clock is off.
func Write(ctx context.Context, c *zkconn.Client, path string, o owner.Owner, hostNow time.Time) (time.Time, error) {
	node := zkconn.Join(path, NodeName)
	o.Written = hostNow.UTC().Truncate(time.Millisecond)
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
			s, ok, err := Read(ctx, c, path)
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
