package lock

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// Entry is one contender in a queue, as `list` and `holders` show it.
type Entry struct {
	Contender
	Path     string    // the lock path
	Position int       // 1-based place in the queue
	Holding  bool      // holds the lock now
	Owner    Owner     // zklock's own data, when Ours
	Ours     bool      // the node was written by zklock
	Raw      string    // another client's data, as text
	Created  time.Time // the node's creation time, from the server
	Session  int64     // the ephemeral owner's session id
	Limit    int       // for semaphore leases: the limit, when a zklock holder wrote it
}

// Queue is a lock path and its contenders in order.
type Queue struct {
	Path    string
	Entries []Entry
}

// Holders returns the entries that hold the lock.
func (q Queue) Holders() []Entry {
	var out []Entry
	for _, e := range q.Entries {
		if e.Holding {
			out = append(out, e)
		}
	}
	return out
}

// Inspect reads the queue of one lock path. A path that does not exist is an
// empty queue: nobody holds that lock.
func Inspect(ctx context.Context, c *zkconn.Client, path string) (Queue, error) {
	return inspect(ctx, c, path, false)
}

// Holders reads who holds the lock at path. Unlike Inspect, it reads the
// data of the holders only, not of every waiter: one round trip per holder
// however long the queue.
func Holders(ctx context.Context, c *zkconn.Client, path string) ([]Entry, error) {
	q, err := inspect(ctx, c, path, true)
	return q.Holders(), err
}

func inspect(ctx context.Context, c *zkconn.Client, path string, holdersOnly bool) (Queue, error) {
	if err := zkconn.ValidatePath(path); err != nil {
		return Queue{}, err
	}
	children, err := c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return Queue{Path: path}, nil
	}
	if err != nil {
		return Queue{}, err
	}
	cs := Contenders(children)
	if len(cs) == 0 {
		for _, ch := range children {
			if ch == semLeases {
				// A semaphore: its holders are its leases.
				return inspect(ctx, c, zkconn.Join(path, semLeases), holdersOnly)
			}
		}
	}
	return inspectChildren(ctx, c, path, cs, holdersOnly)
}

// inspectChildren reads the data of the contenders in cs. With holdersOnly
// it skips those that wait: the holders of a lock are always a prefix of its
// queue, so positions stay right. Semaphore leases are all read, since
// which of them hold depends on the limit in their data.
func inspectChildren(ctx context.Context, c *zkconn.Client, path string, cs []Contender, holdersOnly bool) (Queue, error) {
	q := Queue{Path: path}
	for i, ct := range cs {
		if holdersOnly && ct.Kind != SemaphoreLease && !Holds(cs, i) {
			break
		}
		data, st, err := c.Get(ctx, zkconn.Join(path, ct.Name))
		if errors.Is(err, zk.ErrNoNode) {
			continue // left while we looked
		}
		if err != nil {
			return Queue{}, err
		}
		e := Entry{Contender: ct, Path: path, Session: st.EphemeralOwner,
			Created: time.UnixMilli(st.Ctime).UTC()}
		e.Owner, e.Raw, e.Ours = DecodeOwner(data)
		q.Entries = append(q.Entries, e)
	}
	live := make([]Contender, len(q.Entries))
	for i := range q.Entries {
		live[i] = q.Entries[i].Contender
	}
	limit := 0
	for _, e := range q.Entries {
		if e.Kind == SemaphoreLease && e.Ours && e.Owner.Limit > 0 {
			limit = e.Owner.Limit
		}
	}
	for i := range q.Entries {
		q.Entries[i].Position = i + 1
		if q.Entries[i].Kind == SemaphoreLease {
			// Leases are held in any order; only a lease beyond the
			// limit (its creator still waits for a holder to leave) is
			// not held. Without a zklock lease the limit is unknown.
			q.Entries[i].Limit = limit
			q.Entries[i].Holding = limit == 0 || i < limit
			continue
		}
		q.Entries[i].Holding = Holds(live, i)
	}
	return q, nil
}

// InspectTree finds every lock at or below root (a node with contender
// children) and reads its queue. /zookeeper is skipped.
func InspectTree(ctx context.Context, c *zkconn.Client, root string) ([]Queue, error) {
	if root != "/" {
		if err := zkconn.ValidatePath(root); err != nil {
			return nil, err
		}
	}
	var out []Queue
	todo := []string{root}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		children, err := c.Children(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var subdirs []string
		for _, name := range children {
			if _, ok := ParseSeq(name); ok {
				continue // a contender: ephemeral, so no children below it
			}
			if sub := zkconn.Join(p, name); sub != "/zookeeper" {
				subdirs = append(subdirs, sub)
			}
		}
		if cs := Contenders(children); len(cs) > 0 {
			q, err := inspectChildren(ctx, c, p, cs, false)
			if err != nil {
				return nil, err
			}
			if len(q.Entries) > 0 {
				out = append(out, q)
			}
		}
		sort.Sort(sort.Reverse(sort.StringSlice(subdirs)))
		todo = append(todo, subdirs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
