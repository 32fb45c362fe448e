package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// A superseding queue keeps at most one waiter: the contender that joins
// behind a waiter makes it leave, as a CI deploy queue wants (only the
// newest pipeline deploys once the current deploy is done). The holder is
// never disturbed, and the queue stays a mutex's, with Curator's names.
//
// The newcomer, after creating its node, lists the queue (as every
// contender does) and reads the nodes ahead of it: the holder, to check
// that the path is a superseding queue, and the waiters, to tell each to
// leave. It tells a waiter by adding a "superseded_by" member to the
// waiter's data, with a conditional write, so that the waiter's record of
// who it is stays in place for list and holders. The waiter already
// watches its own node's data (for a revocation), so the request reaches
// it without a watch of the whole queue: every contender still watches
// only its predecessor and its own node, and a newcomer's reads cost the
// others nothing.
//
// The waiter decides at its listing. It reads its own data first and
// lists the queue after: if the listing shows it at the head, the holder
// has released and it takes the lock whatever its data says; otherwise it
// was still a waiter when told, and it leaves. So a waiter that became
// next because the holder released runs however many contenders keep
// arriving: each newcomer can only make a waiter leave, never the one
// that holds, and the lock is never free while anyone waits (GitLab's
// newest_first stalled there; its newest_ready_first is this rule). A
// newcomer that told a waiter which took the lock meanwhile simply waits
// behind it.
//
// With order keys, the highest key survives rather than the newest
// arrival: a newcomer whose key is below a waiter's leaves at once, told
// so by that waiter's node; an equal key is a retry of the same pipeline,
// and the newer one stays.

// Supersede is what a superseding contender declares in its node's data
// (its "supersede" member; see declared).
type Supersede struct {
	// Key is the contender's order key; nil orders contenders by arrival.
	Key *int64 `json:"key,omitempty"`
	// Cancel also stops the contenders ahead that this one beats
	// (GitHub's cancel-in-progress): see cancel.go. Only the contender
	// that cancels needs to know, so it is not written.
	Cancel bool `json:"-"`
}

// beats reports whether a contender declaring s, behind one declaring
// older, takes its place.
func (s Supersede) beats(older Supersede) bool {
	if s.Key == nil || older.Key == nil {
		return true
	}
	return *s.Key >= *older.Key
}

// Superseder names the contender that made a waiter leave.
type Superseder struct {
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	Node string `json:"node"`
	Key  *int64 `json:"key,omitempty"`
}

// ErrSuperseded is what every *SupersededError is.
var ErrSuperseded = errors.New("superseded")

// SupersededError means a waiter of a superseding queue left it because a
// contender that takes precedence joined.
type SupersededError struct {
	Path, Node string
	By         Superseder
}

func (e *SupersededError) Error() string {
	s := fmt.Sprintf("%s: superseded by a newer contender", e.Path)
	if e.By.Key != nil {
		s = fmt.Sprintf("%s: superseded by a contender with order key %d", e.Path, *e.By.Key)
	}
	if e.By.Host != "" {
		s += fmt.Sprintf(" on %s pid %d", e.By.Host, e.By.PID)
	}
	return s + " (node " + e.By.Node + ")"
}

func (e *SupersededError) Unwrap() error { return ErrSuperseded }

// supersededIn returns the "superseded_by" member of a node's data, nil if
// it has none. Most data has none: a scan spares it the decoding.
func supersededIn(data []byte) *Superseder {
	if !mayMention(data, "superseded_by") {
		return nil
	}
	d, ok := declaration(data)
	if !ok {
		return nil
	}
	return d.SupersededBy
}

// supersedeOf returns what data declares of superseding: ok is false for a
// contender of a plain queue (or another library's).
func supersedeOf(data []byte) (s Supersede, ok bool) {
	if !mayMention(data, "supersede") {
		return Supersede{}, false
	}
	d, ok := declaration(data)
	if !ok || d.Supersede == nil {
		return Supersede{}, false
	}
	return *d.Supersede, true
}

// checkAhead is a plain contender's check of the data of the contender it
// waits for, which its watch read anyway: a superseding contender there
// means the path is a superseding queue, which a plain contender must not
// join (its waiters would leave for it, or it would wait behind a queue
// that is told to empty). A superseding contender refuses what is not.
func (l *Lease) checkAhead(data []byte, ahead string) error {
	if isRevokeRequest(data) {
		// Asked to give up (zklock revoke, a cancelling contender): the
		// request replaced its data, which said what it was.
		return nil
	}
	_, ok := supersedeOf(data)
	if ok == (l.supersede != nil) {
		return nil
	}
	return l.supersedeConflict(ok, ahead)
}

func (l *Lease) supersedeConflict(found bool, node string) *KindConflictError {
	e := &KindConflictError{Path: l.Path, Want: RecipeSupersede, Found: RecipeLock, Node: node}
	if found {
		e.Want, e.Found = RecipeLock, RecipeSupersede
	}
	return e
}

// supersedeAhead is a newcomer's work on joining: check that the holder
// and the waiters ahead declare a superseding queue, and tell each waiter
// it beats to leave. A waiter ahead that beats it makes it leave instead
// (a *SupersededError).
func (l *Lease) supersedeAhead(ctx context.Context, q []Contender, idx int, me Superseder) error {
	for i := range q[:idx] {
		node := zkconn.Join(l.Path, q[i].Name)
		for {
			data, st, err := l.c.Get(ctx, node)
			if errors.Is(err, zk.ErrNoNode) {
				break // gone: nobody to check or tell
			}
			if err != nil {
				return err
			}
			if isRevokeRequest(data) {
				break // asked to give up its place already: leaving anyway
			}
			theirs, ok := supersedeOf(data)
			if !ok {
				return l.supersedeConflict(false, node)
			}
			if Holds(q, i) || supersededIn(data) != nil {
				break // not disturbed, or told already
			}
			if l.supersede.Cancel && l.supersede.beats(theirs) {
				break // cancelAhead revokes it
			}
			if !l.supersede.beats(theirs) {
				d, _ := declaration(data)
				return &SupersededError{Path: l.Path, Node: l.Node,
					By: Superseder{Host: d.Host, PID: d.PID, Node: node, Key: theirs.Key}}
			}
			marked, err := withSuperseder(data, me)
			if err != nil {
				return err
			}
			if supersedeRead != nil {
				supersedeRead()
			}
			_, err = l.c.SetVersion(ctx, node, marked, st.Version)
			if errors.Is(err, zk.ErrBadVersion) {
				continue // written meanwhile (it took the lock, say): read again
			}
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			break
		}
	}
	return nil
}

// supersedeRead, when set (by tests), runs between a newcomer's read of a
// waiter's node and its write telling it to leave: the window in which the
// holder may release and the waiter take the lock.
var supersedeRead func()

// withSuperseder adds the "superseded_by" member to a zklock node's data,
// keeping every other member as it was.
func withSuperseder(data []byte, by Superseder) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	b, err := json.Marshal(by)
	if err != nil {
		return nil, err
	}
	m["superseded_by"] = b
	return json.Marshal(m)
}

// readSuperseded reads our own node's data when its watch said it
// changed: a revocation ends the wait (as checkRevoked), a superseder is
// returned for the listing that follows to judge.
func (l *Lease) readSuperseded(ctx context.Context) (*Superseder, error) {
	if !l.ownChanged {
		return nil, nil
	}
	data, st, err := l.c.Get(ctx, l.Node)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, l.goneErr()
	case err != nil:
		return nil, err
	case st.EphemeralOwner != l.c.SessionID():
		return nil, l.goneErr()
	case isRevokeRequest(data):
		return nil, l.revokedErr(ctx, st)
	}
	l.ownChanged = false
	return supersededIn(data), nil
}

// errSupersedeMode refuses to supersede with a lock that is shared, a
// semaphore, or does not wait: only a waiter has a place to give.
var errSupersedeMode = errors.New("only an exclusive lock that waits can supersede")

// errLookAgain tells await that our own node says we were superseded:
// the wait loop reads it and lists again to decide.
var errLookAgain = errors.New("look again")

// superseder names this request's contender, whose node is node, to the
// waiters it tells to leave: who it is comes from the data it wrote.
func (r Request) superseder(node string) Superseder {
	d, _ := declaration(r.Data)
	s := Superseder{Host: d.Host, PID: d.PID, Node: node}
	if r.Supersede != nil {
		s.Key = r.Supersede.Key
	}
	return s
}
