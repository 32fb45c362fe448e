package recipe

import (
	"context"
	"errors"
	"math"
	"slices"
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
	Data     []byte    // the node's data, written by its client
	Created  time.Time // the node's creation time, from the server
	Session  int64     // the ephemeral owner's session id
	Limit    int       // for semaphore leases: the limit, when a zklock holder wrote it
	// Revoke is a revocation asked of this contender and not yet acted
	// on: the bare request still in its node (the node then says nothing
	// else of its owner), or one its zklock goes on regardless of.
	Revoke Revocation
	// Unreadable: this client may not read the node's data (its ACL),
	// so Data is empty.
	Unreadable bool
	// Under is, for a semaphore's entry, the child of Path its node is in:
	// "leases" or "locks". Empty for a lock's entry.
	Under string
}

// Node is the contender's node: a child of Path, or, for a semaphore's
// entry, of Path/Under.
func (e Entry) Node() string {
	if e.Under == "" {
		return zkconn.Join(e.Path, e.Name)
	}
	return zkconn.Join(e.Path, e.Under, e.Name)
}

// Listed is the contender's name as list shows it and revoke takes it: its
// node's name, under Under for a semaphore's entry ("leases/NAME").
func (e Entry) Listed() string {
	if e.Under == "" {
		return e.Name
	}
	return e.Under + "/" + e.Name
}

// Queue is a lock path and its contenders in order.
type Queue struct {
	Path    string
	Entries []Entry
	// Recipe is a lock's or a semaphore's. A semaphore's entries are its
	// leases (holding, or beyond the limit and waiting) and then the
	// contenders waiting for its mutex to create theirs.
	Recipe Recipe
	// Limit is a semaphore's limit, as its zklock leases say; 0 for a lock,
	// or for a semaphore whose leases say nothing of it.
	Limit int
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
	cs, err := Queued(ctx, c, path, children)
	if err != nil {
		return Queue{}, err
	}
	if semaphoreParent(cs, children) {
		// A semaphore: its holders are its leases, and then come those
		// waiting in its mutex to create one.
		leases, err := inspect(ctx, c, zkconn.Join(path, semLeases), holdersOnly)
		if err != nil || holdersOnly {
			return semaphoreQueue(path, leases, Queue{}), err
		}
		locks, err := inspect(ctx, c, zkconn.Join(path, semLocks), false)
		return semaphoreQueue(path, leases, locks), err
	}
	return inspectChildren(ctx, c, path, cs, holdersOnly)
}

// ContenderNames names the contenders at path in queue order, as Entry.Listed
// does, from the listings alone: no node's data is read, so a queue of
// thousands is named in a few round trips. For a semaphore it names every
// node in its mutex, also that of a session whose lease waits, which list
// folds into the lease (telling them apart needs each node's owner).
func ContenderNames(ctx context.Context, c *zkconn.Client, path string) ([]string, error) {
	return contenderNames(ctx, c, path, "")
}

func contenderNames(ctx context.Context, c *zkconn.Client, path, under string) ([]string, error) {
	dir := path
	if under != "" {
		dir = zkconn.Join(path, under)
	}
	children, err := c.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cs, err := Queued(ctx, c, dir, children)
	if err != nil {
		return nil, err
	}
	if under == "" && semaphoreParent(cs, children) {
		// A semaphore: its leases, then those waiting in its mutex.
		leases, err := contenderNames(ctx, c, path, semLeases)
		if err != nil {
			return nil, err
		}
		locks, err := contenderNames(ctx, c, path, semLocks)
		return append(leases, locks...), err
	}
	names := make([]string, 0, len(cs))
	for _, ct := range cs {
		names = append(names, Entry{Contender: ct, Under: under}.Listed())
	}
	return names, nil
}

// semaphoreParent reports whether a lock path whose children are children,
// and its contenders among them cs, is a semaphore's: no contenders of its
// own, and a leases child.
func semaphoreParent(cs []Contender, children []string) bool {
	return len(cs) == 0 && slices.Contains(children, semLeases)
}

// Queued returns the children of path that take part in its queue, in
// order. A child in a flavor's shape is a contender. Any other child whose
// name merely ends in ten digits (a lock path such as
// /locks/deploy-1732377600) is one only if it is ephemeral: a contender
// lives and dies with its session, while a persistent or container node is
// a lock path of its own, to descend into. Only such children cost a round
// trip (an exists, which needs no read right).
func Queued(ctx context.Context, c *zkconn.Client, path string, children []string) ([]Contender, error) {
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
// which of them hold depends on the limit in their data. A contender whose
// data this client may not read is an error.
func inspectChildren(ctx context.Context, c *zkconn.Client, path string, cs []Contender, holdersOnly bool) (Queue, error) {
	var entries []Entry
	for i, ct := range cs {
		if holdersOnly && ct.Kind != SemaphoreLease && !Holds(cs, i) {
			break
		}
		e, ok, err := readEntry(ctx, c, path, ct, false)
		if err != nil {
			return Queue{}, err
		}
		if !ok {
			continue // left while we looked
		}
		entries = append(entries, e)
	}
	return NewQueue(path, entries), nil
}

// ReadEntry reads one contender of the lock at path, for a listing of
// many locks (see NewQueue): ok is false if it has gone. A node whose data
// this client may not read (its ACL) is returned without it, marked
// Unreadable: its stat needs no read right.
func ReadEntry(ctx context.Context, c *zkconn.Client, path string, ct Contender) (e Entry, ok bool, err error) {
	return readEntry(ctx, c, path, ct, true)
}

// readEntry is ReadEntry; without allowUnreadable, a node whose data this
// client may not read is an error.
func readEntry(ctx context.Context, c *zkconn.Client, path string, ct Contender, allowUnreadable bool) (e Entry, ok bool, err error) {
	node := zkconn.Join(path, ct.Name)
	data, st, err := c.Get(ctx, node)
	unreadable := false
	if allowUnreadable && zkconn.IsPermission(err) {
		var exists bool
		exists, st, err = c.Exists(ctx, node)
		if err == nil && !exists {
			err = zk.ErrNoNode
		}
		unreadable = err == nil
	}
	if errors.Is(err, zk.ErrNoNode) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	e = EntryOf(ctx, c, path, ct, data, st)
	e.Unreadable = unreadable
	return e, true, nil
}

// EntryOf is the entry of contender ct at path whose node was read with
// data and stat st, as ReadEntry makes it, for a caller that read the node
// itself (many nodes in one request, say). A node that holds a bare
// revocation request costs one read more, of who asked.
func EntryOf(ctx context.Context, c *zkconn.Client, path string, ct Contender, data []byte, st *zk.Stat) Entry {
	e := Entry{Contender: ct, Path: path, Session: st.EphemeralOwner, Created: time.UnixMilli(st.Ctime).UTC()}
	if isRevokeRequest(data) {
		e.Revoke = recordFor(ctx, c, zkconn.Join(path, ct.Name))
		e.Revoke.At = time.UnixMilli(st.Mtime).UTC()
	} else {
		e.Data = data
		// Most records declare no revocation: a scan for the key spares
		// them the decoding, which a list of a large tree pays per node.
		if mayMention(data, "revoke") {
			if d, ok := declaration(data); ok {
				e.Revoke = d.Revoke
			}
		}
	}
	return e
}

// NewQueue numbers the entries read from one lock path, in queue order, and
// says which of them hold.
func NewQueue(path string, entries []Entry) Queue {
	q := Queue{Path: path, Entries: entries}
	live := make([]Contender, len(q.Entries))
	for i := range q.Entries {
		live[i] = q.Entries[i].Contender
	}
	limit := 0
	for _, e := range q.Entries {
		if e.Kind != SemaphoreLease {
			continue
		}
		if d, ok := declaration(e.Data); ok && d.Limit > 0 {
			limit = d.Limit
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
	return q
}
