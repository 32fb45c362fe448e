package lock

import (
	"context"
	"errors"
	"math"
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
	NodeData           // who the node's data says is there
	Created  time.Time // the node's creation time, from the server
	Session  int64     // the ephemeral owner's session id
	Limit    int       // for semaphore leases: the limit, when a zklock holder wrote it
	// Revoke is a revocation asked of this contender and not yet acted
	// on: the bare request still in its node (the node then says nothing
	// else of its owner), or one its zklock goes on regardless of.
	Revoke Revocation
}

// Queue is a lock path and its contenders in order.
type Queue struct {
	Path    string
	Entries []Entry
	// LastSuccess is the last successful run recorded at Path (see
	// SuccessRecord), if any. A path with a record and an empty queue is
	// still listed, for its record.
	LastSuccess *Success
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
	if err := ValidatePath(path); err != nil {
		return Queue{}, err
	}
	children, err := c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return Queue{Path: path}, nil
	}
	if err != nil {
		return Queue{}, err
	}
	cs, err := contenders(ctx, c, path, children)
	if err != nil {
		return Queue{}, err
	}
	if len(cs) == 0 {
		for _, ch := range children {
			if ch == semLeases {
				// A semaphore: its holders are its leases.
				return inspect(ctx, c, zkconn.Join(path, semLeases), holdersOnly)
			}
		}
	}
	return inspectChildren(ctx, c, path, cs, holdersOnly, nil)
}

// contenders returns the children of path that take part in its queue, in
// order. A child in a flavor's shape is a contender. Any other child whose
// name merely ends in ten digits (a lock path such as
// /locks/deploy-1732377600) is one only if it is ephemeral: a contender
// lives and dies with its session, while a persistent or container node is
// a lock path of its own, to descend into. Only such children cost a round
// trip (an exists, which needs no read right).
func contenders(ctx context.Context, c *zkconn.Client, path string, children []string) ([]Contender, error) {
	cs := Contenders(children)
	out := cs[:0]
	for _, ct := range cs {
		if ct.Flavor == FlavorUnknown {
			ok, st, err := c.Exists(ctx, zkconn.Join(path, ct.Name))
			if err != nil {
				return nil, err
			}
			if !ok || !isEphemeral(st.EphemeralOwner) {
				continue
			}
		}
		out = append(out, ct)
	}
	return out, nil
}

// Markers the server keeps in a stat's ephemeralOwner for nodes that have
// no owning session (ZooKeeper's EphemeralType): a container is
// Long.MIN_VALUE, and a TTL node has 0xFF in its top byte (a session id's
// top byte is its server's id, 1 to 254).
const (
	containerOwner = math.MinInt64
	ttlOwnerByte   = 0xff
)

// isEphemeral reports whether a stat's ephemeralOwner names a session.
func isEphemeral(owner int64) bool {
	return owner != 0 && owner != containerOwner && uint64(owner)>>56 != ttlOwnerByte
}

// inspectChildren reads the data of the contenders in cs. With holdersOnly
// it skips those that wait: the holders of a lock are always a prefix of its
// queue, so positions stay right. Semaphore leases are all read, since
// which of them hold depends on the limit in their data. With skipped set,
// a contender whose data this client may not read is listed without it and
// its path added to skipped; without, that is an error.
func inspectChildren(ctx context.Context, c *zkconn.Client, path string, cs []Contender, holdersOnly bool, skipped *[]string) (Queue, error) {
	q := Queue{Path: path}
	for i, ct := range cs {
		if holdersOnly && ct.Kind != SemaphoreLease && !Holds(cs, i) {
			break
		}
		node := zkconn.Join(path, ct.Name)
		data, st, err := c.Get(ctx, node)
		if skipped != nil && zkconn.IsPermission(err) {
			// The stat alone needs no read right.
			var ok bool
			ok, st, err = c.Exists(ctx, node)
			if err == nil && !ok {
				err = zk.ErrNoNode
			}
			if err == nil {
				*skipped = append(*skipped, node)
			}
		}
		if errors.Is(err, zk.ErrNoNode) {
			continue // left while we looked
		}
		if err != nil {
			return Queue{}, err
		}
		e := Entry{Contender: ct, Path: path, Session: st.EphemeralOwner,
			Created: time.UnixMilli(st.Ctime).UTC()}
		e.NodeData = DecodeNodeData(data)
		switch {
		case isRevokeRequest(data):
			e.NodeData = NodeData{}
			e.Revoke = recordFor(ctx, c, node)
			e.Revoke.At = time.UnixMilli(st.Mtime).UTC()
		case e.ByZklock:
			e.Revoke = e.Owner.Revoke
		}
		q.Entries = append(q.Entries, e)
	}
	live := make([]Contender, len(q.Entries))
	for i := range q.Entries {
		live[i] = q.Entries[i].Contender
	}
	limit := 0
	for _, e := range q.Entries {
		if e.Kind == SemaphoreLease && e.ByZklock && e.Owner.Limit > 0 {
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

// Tree is what InspectTree found below a path.
type Tree struct {
	Queues []Queue
	// Skipped are the paths this client may not read: nodes whose children
	// (and so every lock below them) it cannot list, and contenders whose
	// data it cannot read (listed without it). Each appears once.
	Skipped []string
}

// InspectTree finds every lock at or below root (a node with contender
// children) and reads its queue. /zookeeper is skipped. On a shared ensemble
// other teams' subtrees may be closed to this client: what it may not read
// is skipped and named in Tree.Skipped, and everything else is listed. Only
// root itself must be readable.
func InspectTree(ctx context.Context, c *zkconn.Client, root string) (Tree, error) {
	if err := zkconn.ValidatePath(root); err != nil {
		return Tree{}, err
	}
	var t Tree
	todo := []string{root}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		children, err := c.Children(ctx, p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case p != root && zkconn.IsPermission(err):
			t.Skipped = append(t.Skipped, p)
			continue
		case err != nil:
			return Tree{}, err
		}
		cs, err := contenders(ctx, c, p, children)
		if err != nil {
			return Tree{}, err
		}
		isContender := make(map[string]bool, len(cs))
		for _, ct := range cs {
			isContender[ct.Name] = true
		}
		var subdirs []string
		var last *Success
		for _, name := range children {
			if isContender[name] {
				continue // ephemeral, or shaped like one: no locks below it
			}
			if name == SuccessRecord {
				s, ok, err := LastSuccess(ctx, c, p)
				switch {
				case zkconn.IsPermission(err):
					t.Skipped = append(t.Skipped, zkconn.Join(p, name))
				case err != nil:
					return Tree{}, err
				case ok:
					last = &s
				}
				continue
			}
			if sub := zkconn.Join(p, name); sub != "/zookeeper" {
				subdirs = append(subdirs, sub)
			}
		}
		q := Queue{Path: p}
		if len(cs) > 0 {
			if q, err = inspectChildren(ctx, c, p, cs, false, &t.Skipped); err != nil {
				return Tree{}, err
			}
		}
		q.LastSuccess = last
		if len(q.Entries) > 0 || last != nil {
			t.Queues = append(t.Queues, q)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(subdirs)))
		todo = append(todo, subdirs...)
	}
	sort.Slice(t.Queues, func(i, j int) bool { return t.Queues[i].Path < t.Queues[j].Path })
	sort.Strings(t.Skipped)
	return t, nil
}
