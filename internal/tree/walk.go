// Package tree reads every lock at or below a path, for zklock list: the
// queues, who is in them, and the success records beside them.
package tree

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/zkconn"
)

// WalkConcurrency bounds the requests a tree walk keeps in flight. Requests
// pipeline on the one connection, so the walk's time is the tree's size
// times the server's work per request, not times a round trip; the bound
// keeps the server's queue for this client (and zklock's memory) small on
// a tree of any size.
const WalkConcurrency = 128

// Queue is a lock path's queue, and the last successful run recorded
// there, if any. A path with a record and an empty queue is still listed,
// for its record.
type Queue struct {
	lock.Queue
	LastSuccess *success.Record
}

// Tree is what Read found below a path.
type Tree struct {
	Queues []Queue
	// Skipped are the paths this client may not read: nodes whose children
	// (and so every lock below them) it cannot list, and contenders whose
	// data it cannot read (listed without it). Each appears once.
	Skipped []string
}

// Read finds every lock at or below root (a node with contender
// children) and reads its queue. /zookeeper is skipped. On a shared ensemble
// other teams' subtrees may be closed to this client: what it may not read
// is skipped and named in Tree.Skipped, and everything else is listed. Only
// root itself must be readable. A semaphore is one queue at its own path.
//
// The walk keeps up to WalkConcurrency requests in flight: listing a node
// and reading each contender are separate pieces of work, so a wide tree
// and a long queue are read alike.
func Read(ctx context.Context, c *zkconn.Client, root string) (Tree, error) {
	if err := zkconn.ValidatePath(root); err != nil {
		return Tree{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &walk{c: c, root: root, cancel: cancel}
	w.wake = sync.NewCond(&w.mu)
	w.push(func(ctx context.Context) error { return w.list(ctx, root) })
	var workers sync.WaitGroup
	for range WalkConcurrency {
		workers.Add(1)
		go func() {
			defer workers.Done()
			w.work(ctx)
		}()
	}
	workers.Wait()
	if w.err != nil {
		return Tree{}, w.err
	}
	t := Tree{Skipped: w.skipped}
	t.Queues = withSuccesses(lock.Semaphores(w.queues), w.success)
	sort.Slice(t.Queues, func(i, j int) bool { return t.Queues[i].Path < t.Queues[j].Path })
	sort.Strings(t.Skipped)
	return t, nil
}

// walk is one Read: a pool of workers taking pieces of work (one
// request or a few each) from a shared list, until the list is empty and no
// worker is busy, or one fails.
type walk struct {
	c      *zkconn.Client
	root   string
	cancel context.CancelFunc

	mu      sync.Mutex
	wake    *sync.Cond // a piece was added, or the walk ended
	todo    []func(context.Context) error
	busy    int // pieces taken and not yet done
	err     error
	queues  []lock.Queue
	skipped []string
	// success holds the success records found, by lock path (see
	// success.NodeName).
	success map[string]*success.Record
}

func (w *walk) push(f func(context.Context) error) {
	w.mu.Lock()
	w.todo = append(w.todo, f)
	w.mu.Unlock()
	w.wake.Signal()
}

// work runs pieces until the walk is over. The first error ends it: the
// context is cancelled, so the other workers' requests return at once.
func (w *walk) work(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.todo) == 0 && w.busy > 0 && w.err == nil {
			w.wake.Wait()
		}
		if w.err != nil || len(w.todo) == 0 {
			w.wake.Broadcast() // over: let every worker see it
			return
		}
		f := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		w.busy++
		w.mu.Unlock()
		err := f(ctx)
		w.mu.Lock()
		w.busy--
		if err != nil && w.err == nil {
			w.err = err
			w.cancel()
		}
		if w.busy == 0 {
			w.wake.Broadcast()
		}
	}
}

// list lists p: its contenders are read as separate pieces, and every other
// child is listed in turn.
func (w *walk) list(ctx context.Context, p string) error {
	children, err := w.c.Children(ctx, p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case p != w.root && zkconn.IsPermission(err):
		w.mu.Lock()
		w.skipped = append(w.skipped, p)
		w.mu.Unlock()
		return nil
	case err != nil:
		return err
	}
	cs, err := lock.Queued(ctx, w.c, p, children)
	if err != nil {
		return err
	}
	isContender := make(map[string]bool, len(cs))
	for _, ct := range cs {
		isContender[ct.Name] = true
	}
	for _, name := range children {
		if isContender[name] {
			continue // ephemeral, or shaped like one: no locks below it
		}
		if name == success.NodeName {
			w.push(func(ctx context.Context) error { return w.readSuccess(ctx, p) })
			continue
		}
		if sub := zkconn.Join(p, name); sub != "/zookeeper" {
			w.push(func(ctx context.Context) error { return w.list(ctx, sub) })
		}
	}
	if len(cs) > 0 {
		q := &pendingQueue{path: p, entries: make([]lock.Entry, len(cs)), found: make([]bool, len(cs)), left: len(cs)}
		for i, ct := range cs {
			w.push(func(ctx context.Context) error { return w.read(ctx, q, i, ct) })
		}
	}
	return nil
}

// pendingQueue is a queue whose contenders are being read; the last read
// completes it.
type pendingQueue struct {
	path    string
	entries []lock.Entry
	found   []bool // the contender was still there
	left    int
}

func (w *walk) read(ctx context.Context, q *pendingQueue, i int, ct lock.Contender) error {
	e, ok, err := lock.ReadEntry(ctx, w.c, q.path, ct)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	q.entries[i], q.found[i] = e, ok
	if ok && e.Unreadable {
		w.skipped = append(w.skipped, zkconn.Join(q.path, ct.Name))
	}
	if q.left--; q.left > 0 {
		return nil
	}
	var entries []lock.Entry
	for i, e := range q.entries {
		if q.found[i] {
			entries = append(entries, e)
		}
	}
	if len(entries) > 0 {
		w.queues = append(w.queues, lock.NewQueue(q.path, entries))
	}
	return nil
}

// readSuccess reads the success record at lock path p.
func (w *walk) readSuccess(ctx context.Context, p string) error {
	s, ok, err := success.Read(ctx, w.c, p)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case zkconn.IsPermission(err):
		w.skipped = append(w.skipped, zkconn.Join(p, success.NodeName))
	case err != nil:
		return err
	case ok:
		if w.success == nil {
			w.success = map[string]*success.Record{}
		}
		w.success[p] = &s
	}
	return nil
}

// withSuccesses gives each queue its lock path's success record, and lists
// a path that has a record but no queue, for its record.
func withSuccesses(lqs []lock.Queue, records map[string]*success.Record) []Queue {
	qs := make([]Queue, len(lqs), len(lqs)+len(records))
	for i, q := range lqs {
		qs[i].Queue = q
		if s, ok := records[q.Path]; ok {
			qs[i].LastSuccess = s
			delete(records, q.Path)
		}
	}
	for p, s := range records {
		qs = append(qs, Queue{Queue: lock.Queue{Path: p}, LastSuccess: s})
	}
	return qs
}
