package runner

import (
	"context"
	"errors"
	"path"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// Waits says how closely a run reports its wait (WaitStatus events).
// Each WaitStatus is sent from one goroutine, never from the acquisition's
// own path, so a slow terminal never delays taking the lock.
type Waits int

const (
	// WaitsNone sends no WaitStatus.
	WaitsNone Waits = iota
	// WaitsPlaced sends one when the wait begins and whenever this
	// waiter's place changes: when the contender it watches leaves. It
	// reads the holder's node then, without a watch: each waiter is woken
	// by its own predecessor only, so a queue stays herd-free, and a
	// waiter deep in it may show a holder that has since left.
	WaitsPlaced
	// WaitsLive also follows the holder with a data watch on its node,
	// so that a new holder, or its recorded acquisition, shows at once:
	// for a status line that a person watches. Every such waiter is
	// woken when the holder leaves.
	WaitsLive
)

// WaitStatus is where a waiting zklock stands: the event sent when the
// wait begins and whenever the position, the holder or what is known of
// the holder changes.
type WaitStatus struct {
	Path     string
	Node     string // our own node
	Position int
	// Holder is who holds the lock; nil when it is not known (a
	// semaphore's contender waiting for its mutex, or a holder whose node
	// could not be read).
	Holder *Holder
	// Since is when this process joined the queue.
	Since time.Time
	wait  recipe.Wait
}

// Deadline is when the wait gives up, if it has a timeout.
func (s WaitStatus) Deadline() (time.Time, bool) { return s.wait.Deadline() }

// Holder is the holder of a lock that zklock waits for.
type Holder struct {
	recipe.Contender
	owner.NodeData
	// HeldSince is when it took the lock, on this host's clock. It comes
	// from the server's timestamps, which every client shares: the
	// holder's node's creation time, plus the wait the holder recorded
	// (measured on its own clock, so the clocks' offset cancels out),
	// against our own node's creation time. A holder seen taking over
	// while this process watched is timed from that moment instead, when
	// that is later: a holder that has not yet recorded its wait would
	// otherwise seem to have held since it joined.
	HeldSince time.Time
}

// holderRefresh bounds one read of the holder's node.
const holderRefresh = 5 * time.Second

// progressWatch turns the lock package's wait callbacks into WaitStatus
// events. OnWait only records where the wait stands; one goroutine, which
// close ends, reads the holder's node and reports. Following the holder
// (WaitsLive), it leaves a data watch on the holder's node, so that a
// change of holder shows even when the holder is not our predecessor.
type progressWatch struct {
	ev     Events
	follow bool
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // a new Waiting, or the holder's watch fired

	mu     sync.Mutex
	c      *zkconn.Client // the session waiting; a new one after a lost place
	path   string
	at     recipe.Waiting
	since  time.Time
	wait   recipe.Wait
	closed bool
}

func newProgressWatch(ev Events, follow bool, since time.Time, wait recipe.Wait) *progressWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &progressWatch{ev: ev, follow: follow, ctx: ctx, cancel: cancel, since: since, wait: wait,
		done: make(chan struct{}), wake: make(chan struct{}, 1)}
	go w.run()
	return w
}

// onWait records a wait's state; it returns at once.
func (w *progressWatch) onWait(c *zkconn.Client, path string, at recipe.Waiting) {
	w.mu.Lock()
	w.c, w.path, w.at = c, path, at
	w.mu.Unlock()
	w.poke()
}

func (w *progressWatch) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// close ends the goroutine; nil-safe. The goroutine's requests return at
// once when its context is cancelled.
func (w *progressWatch) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	<-w.done
}

// ownClock pairs our node's creation time on the server's clock with this
// host's clock: their offset, for turning server times into local ones.
type ownClock struct {
	node   string
	offset time.Duration // server minus local
}

func (w *progressWatch) run() {
	defer close(w.done)
	var (
		shown     WaitStatus
		shownNode string // the holder node shown
		own       ownClock
		holder    *Holder
		node      string // holder's node that holder describes
		watch     <-chan zk.Event
		tookOver  time.Time // when a new holder was seen taking over
	)
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		case ev := <-watch:
			watch = nil
			if ev.Type == zk.EventNodeDeleted {
				// The holder left. If it was right ahead of us the
				// acquisition is about to say where we stand (or to
				// hold); otherwise find the new holder here.
				tookOver = time.Now()
				w.mu.Lock()
				ahead := zkconn.Join(w.path, w.at.Ahead.Name) == node
				w.mu.Unlock()
				if !ahead {
					w.relist()
				}
				node = ""
				continue
			}
			node = "" // data changed (e.g. it recorded when it took the lock): read again
		}
		w.mu.Lock()
		c, path, at, closed := w.c, w.path, w.at, w.closed
		w.mu.Unlock()
		if closed || path == "" {
			continue
		}
		if at.Node != own.node {
			own = w.ownClock(c, at.Node)
		}
		if at.Holder != node {
			holder, watch = w.readHolder(c, at.Holder, own, tookOver)
			node = at.Holder
		}
		st := WaitStatus{Path: path, Node: at.Node, Position: at.Position, Holder: holder, Since: w.since, wait: w.wait}
		if st.Path == shown.Path && st.Position == shown.Position && node == shownNode && sameHolder(st.Holder, shown.Holder) {
			continue
		}
		shown, shownNode = st, node
		w.ev.Event(st)
	}
}

func sameHolder(a, b *Holder) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && a.HeldSince.Equal(b.HeldSince)
}

// ownClock reads our node's creation time; zero offset if it cannot.
func (w *progressWatch) ownClock(c *zkconn.Client, node string) ownClock {
	ctx, cancel := context.WithTimeout(w.ctx, holderRefresh)
	defer cancel()
	local := w.since
	ok, st, err := c.Exists(ctx, node)
	if err != nil || !ok {
		return ownClock{node: node}
	}
	return ownClock{node: node, offset: time.UnixMilli(st.Ctime).Sub(local)}
}

// readHolder reads the holder's node, and leaves a data watch on it when
// following the holder.
func (w *progressWatch) readHolder(c *zkconn.Client, node string, own ownClock, tookOver time.Time) (*Holder, <-chan zk.Event) {
	if node == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(w.ctx, holderRefresh)
	defer cancel()
	var (
		data []byte
		st   *zk.Stat
		ev   <-chan zk.Event
		err  error
	)
	if w.follow {
		data, st, ev, err = c.GetW(ctx, node)
	} else {
		data, st, err = c.Get(ctx, node)
	}
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			w.relist() // gone already
		}
		return nil, nil
	}
	ct, _ := recipe.ParseContender(path.Base(node))
	h := &Holder{Contender: ct, NodeData: owner.Decode(data)}
	h.HeldSince = heldSince(time.UnixMilli(st.Ctime), h.NodeData, own.offset, tookOver)
	return h, ev
}

// heldSince is when a holder took the lock, on this host's clock: its
// node's creation (server clock) plus the wait it recorded (its own clock,
// so only a difference of two of its readings is used), less the offset of
// the server's clock from ours; or when we saw it take over, if later.
func heldSince(created time.Time, d owner.NodeData, offset time.Duration, tookOver time.Time) time.Time {
	if o := d.Owner; d.ByZklock && !o.Acquired.IsZero() && o.Acquired.After(o.Since) {
		created = created.Add(o.Acquired.Sub(o.Since))
	}
	t := created.Add(-offset)
	if t.Before(tookOver) {
		return tookOver
	}
	return t
}

// relist finds the head of the queue after the holder left without the
// acquisition being told (it watches only its predecessor).
func (w *progressWatch) relist() {
	w.mu.Lock()
	lockPath, at, c := w.path, w.at, w.c
	w.mu.Unlock()
	if at.Holder == "" {
		return
	}
	dir := path.Dir(at.Holder)
	ctx, cancel := context.WithTimeout(w.ctx, holderRefresh)
	defer cancel()
	children, err := c.Children(ctx, dir)
	if err != nil {
		return
	}
	// A lock's own queue is counted as the acquisition counts it, so a
	// persistent child (a lock path of its own) is nobody's holder. A
	// semaphore's leases all count, leftovers too, as Curator counts them
	// when it admits a holder.
	var q []recipe.Contender
	if path.Dir(at.Node) == dir {
		if q, err = recipe.Queued(ctx, c, dir, children); err != nil {
			return
		}
	} else {
		q = recipe.Contenders(children)
	}
	own := path.Base(at.Node)
	for i, ct := range q {
		if ct.Name != own {
			continue
		}
		if i == 0 {
			return // we hold, or are about to: the acquisition says so
		}
		w.mu.Lock()
		if w.path == lockPath && w.at.Node == at.Node {
			if path.Dir(at.Node) == dir {
				w.at.Position = i + 1
			}
			w.at.Holder = zkconn.Join(dir, q[0].Name)
		}
		w.mu.Unlock()
		w.poke()
		return
	}
}
