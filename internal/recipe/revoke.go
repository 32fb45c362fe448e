package recipe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// revokeMessage is what Apache Curator's Revoker.attemptRevoke writes as the
// data of a contender's node to ask it to give up its place. Curator's
// revocable lock compares the whole data with it (Arrays.equals), so the
// request must be exactly these bytes: who asked is recorded elsewhere (see
// revokeRecord).
var revokeMessage = []byte("__REVOKE__")

// isRevokeRequest reports whether a node's data asks its owner to give up.
func isRevokeRequest(data []byte) bool { return bytes.Equal(data, revokeMessage) }

// ErrRevoked is what every *RevokedError is.
var ErrRevoked = errors.New("lock revoked")

// Revocation is a request that a contender give up its place: who asked
// (when zklock's record says so) and when. The zero Revocation is none.
type Revocation struct {
	// Host, PID and User name the revoker from zklock's record; all empty
	// for a revoker that leaves none (Curator's Revoker, a zkCli set).
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	User string `json:"user,omitempty"`
	// At is when the request was written into the node, on the server's
	// clock (the node's mtime).
	At time.Time `json:"at"`
	// Supersede names the contender that asked in order to take the
	// place (--cancel-in-progress): a waiter so asked leaves superseded.
	Supersede *Superseder `json:"supersede,omitempty"`
}

// Pending reports whether there is a request at all.
func (r Revocation) Pending() bool { return !r.At.IsZero() }

// By says who asked, in a few words.
func (r Revocation) By() string {
	if r.Host == "" {
		return "a client that left no record (a Curator Revoker?)"
	}
	s := fmt.Sprintf("%s pid %d", r.Host, r.PID)
	if r.User != "" {
		s = r.User + "@" + s
	}
	return s
}

// Requester describes this process as a revoker.
func Requester() Revocation {
	host, _ := os.Hostname()
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return Revocation{Host: host, PID: os.Getpid(), User: name}
}

// RevokedError means a contender of ours was asked to give up its place:
// a holder stops its command and releases, a waiter leaves the queue.
type RevokedError struct {
	Path, Node string
	Revocation
	version int32 // the node's data version holding the request
}

func (e *RevokedError) Error() string {
	return fmt.Sprintf("%s revoked by %s at %s", e.Path, e.By(), e.At.Local().Format(time.RFC3339))
}

func (e *RevokedError) Unwrap() error { return ErrRevoked }

// revokeRecord is the data zklock's revoke leaves in the lock path's own
// node (the parent of the contenders): who asked each contender, by node
// name. The lock path's data is free: no recipe zklock shares a path with
// reads it, writing it creates no node (a container is still reaped once
// its last contender leaves), and the contender's own data must stay
// exactly revokeMessage for Curator.
type revokeRecord struct {
	Revocations map[string]Revocation `json:"zklock_revocations"`
}

// recordFor reads who asked node (a full path) to give up, if zklock's
// record in its parent says so. A missing or foreign record is no record.
func recordFor(ctx context.Context, c *zkconn.Client, node string) Revocation {
	parent, name := path.Dir(node), path.Base(node)
	data, _, err := c.Get(ctx, parent)
	if err != nil {
		return Revocation{}
	}
	var rec revokeRecord
	if json.Unmarshal(data, &rec) != nil {
		return Revocation{}
	}
	return rec.Revocations[name]
}

// record writes who asks node (a name under parent) into parent's data,
// keeping the entries of contenders still present (live), with a
// conditional write so that two revokers of one path keep both entries.
// A parent this client may not write (another user's protected path) gets
// no record: the request itself is what matters.
func record(ctx context.Context, c *zkconn.Client, parent, node string, by Revocation, live []string) error {
	for {
		data, st, err := c.Get(ctx, parent)
		if err != nil {
			return err
		}
		var rec revokeRecord
		if len(data) > 0 && (json.Unmarshal(data, &rec) != nil || rec.Revocations == nil) {
			// Someone else's data: not ours to replace.
			return nil
		}
		keep := map[string]Revocation{node: by}
		for _, n := range live {
			if r, ok := rec.Revocations[n]; ok && n != node {
				keep[n] = r
			}
		}
		b, _ := json.Marshal(revokeRecord{Revocations: keep})
		_, err = c.SetVersion(ctx, parent, b, st.Version)
		switch {
		case errors.Is(err, zk.ErrBadVersion):
			continue
		case zkconn.IsPermission(err):
			return nil
		}
		return err
	}
}

// revokeRounds bounds how often Revoke lists the queue again because a
// holder it was about to ask left meanwhile: each time the lock changed
// hands, and the new holder is asked too.
const revokeRounds = 5

// ErrHandoffChurn means the holders kept leaving between Revoke's listing
// and its request, more often than revokeRounds allows.
var ErrHandoffChurn = errors.New("the lock kept changing hands")

// revokeListed, when set (by tests), runs after each listing of the queue
// and before any request is written: the window in which a holder may
// leave and its successor take over.
var revokeListed func()

// Revoked is what one Revoke did.
type Revoked struct {
	// Asked are the contenders the request was written to.
	Asked []Entry
	// Left are those about to be asked that left first: a holder that
	// released between the listing and the request.
	Left []Entry
	// Deaf are those not asked because their client has no revocation:
	// a Kazoo client's node (Kazoo's recipes never watch for the request,
	// and writing it would only replace the identifier Kazoo keeps there).
	Deaf []Entry
}

// deaf reports whether e's client cannot hear a revocation: a Kazoo
// contender that is not a zklock's (zklock's Kazoo flavor watches for it).
func deaf(e Entry) bool { return e.Flavor == FlavorKazoo && !byZklock(e.Data) }

// Revoke asks contenders at path to give up their places, Curator's way:
// it writes revokeMessage as each one's data. With node "" it asks every
// holder (the one of a mutex, each reader of a shared lock, each lease of
// a semaphore); otherwise only the contender named node (a name or a full
// path under path), holder or waiter. Nobody asked means there was nobody
// to ask: no holder, or no such contender. Revocation is cooperative: the
// contender's client must be alive and watching to act on it.
//
// A holder that leaves between the listing and the request is not the
// holder any more: whoever took over is. Revoke lists again and asks the
// new holders, up to revokeRounds times (then ErrHandoffChurn, with what
// was done so far), unless the one that left had already been asked to
// give up: its leaving is that earlier request's effect, and its successor
// was asked nothing. A named contender that left is not followed either.
func Revoke(ctx context.Context, c *zkconn.Client, lockPath, node string, by Revocation) (Revoked, error) {
	var r Revoked
	done := map[string]bool{}
	want := node // the full path a node given as leases/NAME or locks/NAME means
	if strings.Contains(node, "/") && !strings.HasPrefix(node, "/") {
		want = zkconn.Join(lockPath, node)
	}
	for round := 0; round < revokeRounds; round++ {
		entries, live, err := revokeCandidates(ctx, c, lockPath, node, want)
		if err != nil {
			return r, err
		}
		if revokeListed != nil {
			revokeListed()
		}
		var targets []string
		byName := map[string]Entry{}
		for _, e := range entries {
			full := e.Node()
			if !done[full] && ((node == "" && e.Holding) || (node != "" && (e.Name == node || full == want))) {
				targets = append(targets, full)
				byName[full] = e
			}
		}
		follow := false
		for _, full := range targets {
			e := byName[full]
			done[full] = true
			if deaf(e) {
				r.Deaf = append(r.Deaf, e)
				continue
			}
			parent := path.Dir(full)
			if err := record(ctx, c, parent, e.Name, by, live[parent]); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return r, err
			}
			err := c.Set(ctx, full, revokeMessage)
			if errors.Is(err, zk.ErrNoNode) {
				r.Left = append(r.Left, e)
				follow = follow || (node == "" && !e.Revoke.Pending())
				continue
			}
			if err != nil {
				return r, err
			}
			r.Asked = append(r.Asked, e)
		}
		if !follow {
			return r, nil
		}
	}
	return r, fmt.Errorf("%w while revoke tried to reach its holder (%d times)", ErrHandoffChurn, revokeRounds)
}

// revokeCandidates lists the queue at lockPath and reads only the nodes
// Revoke may ask: its holders (node ""), or the contender node names
// (want is its full path). The holders of a lock are a prefix of its queue,
// in sequence order, and a semaphore's are among its leases (at most its
// limit and one waiting lease each), so however many wait, revoke reads a
// handful of nodes: 20,000 waiters cost two listings, not 20,000 reads.
// live names every contender, by parent node, for record.
func revokeCandidates(ctx context.Context, c *zkconn.Client, lockPath, node, want string) ([]Entry, map[string][]string, error) {
	if err := ValidatePath(lockPath); err != nil {
		return nil, nil, err
	}
	live := map[string][]string{}
	list := func(dir string) ([]Contender, error) {
		children, err := c.Children(ctx, dir)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		cs, err := Queued(ctx, c, dir, children)
		for _, ct := range cs {
			live[dir] = append(live[dir], ct.Name)
		}
		if err == nil && dir == lockPath && semaphoreParent(cs, children) {
			return nil, errSemaphore
		}
		return cs, err
	}
	// read reads the contenders of cs that Revoke may ask: the holders,
	// or the one named.
	read := func(dir string, cs []Contender, holdersOnly bool) ([]Entry, error) {
		if node == "" {
			q, err := inspectChildren(ctx, c, dir, cs, holdersOnly)
			return q.Entries, err
		}
		for i, ct := range cs {
			if ct.Name != node && zkconn.Join(dir, ct.Name) != want {
				continue
			}
			e, ok, err := readEntry(ctx, c, dir, ct, false)
			if err != nil || !ok {
				return nil, err
			}
			e.Position, e.Holding = i+1, Holds(cs, i)
			return []Entry{e}, nil
		}
		return nil, nil
	}
	cs, err := list(lockPath)
	if !errors.Is(err, errSemaphore) {
		if err != nil {
			return nil, nil, err
		}
		entries, err := read(lockPath, cs, true)
		return entries, live, err
	}
	// A semaphore: its leases (every one is read, as which hold depends
	// on the limit their data declares), then its mutex's queue.
	leasesDir, locksDir := zkconn.Join(lockPath, semLeases), zkconn.Join(lockPath, semLocks)
	leaseCs, err := list(leasesDir)
	if err != nil {
		return nil, nil, err
	}
	leases, err := inspectChildren(ctx, c, leasesDir, leaseCs, true)
	if err != nil {
		return nil, nil, err
	}
	var locks Queue
	if node != "" {
		lockCs, err := list(locksDir)
		if err != nil {
			return nil, nil, err
		}
		named, err := read(locksDir, lockCs, false)
		if err != nil {
			return nil, nil, err
		}
		locks = Queue{Path: locksDir, Entries: named}
	}
	return semaphoreQueue(lockPath, leases, locks).Entries, live, nil
}

// errSemaphore tells revokeCandidates' listing that the lock path is a
// semaphore's.
var errSemaphore = errors.New("a semaphore")

// Released waits until none of entries' nodes exists any more: the revoked
// holders have released. It watches each in turn; ctx bounds the wait.
func Released(ctx context.Context, c *zkconn.Client, entries []Entry) error {
	for _, e := range entries {
		full := e.Node()
		for {
			_, _, ev, err := c.GetW(ctx, full)
			switch {
			case errors.Is(err, zk.ErrNoNode):
			case err != nil && zkconn.IsConnectionLoss(err):
				if err := c.WaitSession(ctx); err != nil {
					return err
				}
				continue
			case err != nil:
				return err
			default:
				select {
				case <-ev:
					continue
				case <-c.Lost():
					return c.LostErr()
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			break
		}
	}
	return nil
}

// revokedErr describes the request found in our node, whose stat is st.
func (l *Lease) revokedErr(ctx context.Context, st *zk.Stat) *RevokedError {
	r := recordFor(ctx, l.c, l.Node)
	r.At = time.UnixMilli(st.Mtime).UTC()
	return &RevokedError{Path: l.Path, Node: l.Node, Revocation: r, version: st.Version}
}

// checkRevoked reads our node if its watch said its data changed while we
// waited, and returns a *RevokedError if that was a revocation request.
func (l *Lease) checkRevoked(ctx context.Context) error {
	if !l.ownChanged {
		return nil
	}
	return l.Verify(ctx)
}

// MarkRevokePending rewrites our node's data as data, which notes the
// revocation r (its "revoke" member, see declared), when the holder was
// asked to give up but goes on (its command must not be interrupted): list
// and holders then show who the holder is and that a revocation is
// pending, rather than the bare request. It writes only over the request
// it saw, so a newer request is not lost.
func (l *Lease) MarkRevokePending(ctx context.Context, data []byte, r *RevokedError) error {
	if r.Node != l.Node {
		return nil
	}
	_, err := l.c.SetVersion(ctx, l.Node, data, r.version)
	if errors.Is(err, zk.ErrBadVersion) {
		return nil // a newer write: the guard sees it
	}
	return err
}
