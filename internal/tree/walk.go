// Package tree reads every lock at or below a path, for zklock list: the
// queues, who is in them, and the success records beside them.
package tree

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/zkconn"
)

// WalkConcurrency bounds the requests a tree walk keeps in flight. Requests
// pipeline on the one connection, so the walk's time is the tree's size
// times the server's work per request, not times a round trip; the bound
// keeps the server's queue for this client (and zklock's memory) small on
// a tree of any size.
const WalkConcurrency = 128

// A server that takes many reads in one request (ZooKeeper 3.6 and later,
// see zkconn.MultiRead) gets the walk's reads in batches of up to
// walkBatch, walkBatchConcurrency of them in flight: a server spends most
// of a small read's time on the request around it, so the walk costs it a
// fraction of one request per node.
const (
	walkBatch            = 128
	walkBatchConcurrency = 16
)

// oneByOne makes the walk read one node per request, as it does for a
// server older than 3.6; the tests set it to walk both ways.
var oneByOne = false

// Queue is a lock path's queue, and the last successful run recorded
// there, if any. A path with a record and an empty queue is still listed,
// for its record.
type Queue struct {
	recipe.Queue
	LastSuccess *success.Record
}

// Tree is what Read found below a path.
type Tree struct {
	Queues []Queue
	// Skipped are the paths this client may not read: nodes whose children
	// (and so every lock below them) it cannot list, and contenders whose
	// data it cannot read (listed without it). Each appears once.
	Skipped []string
	// Listed are the nodes whose children the walk listed: root, when it
	// exists, and every node below it but the contenders. A child watch
	// on each of them sees every change of what Read found.
	Listed []string
}

// Read finds every lock at or below root (a node with contender
// children) and reads its queue. /zookeeper is skipped. On a shared ensemble
// other teams' subtrees may be closed to this client: what it may not read
// is skipped and named in Tree.Skipped, and everything else is listed. Only
// root itself must be readable. A semaphore is one queue at its own path.
//
// The walk keeps up to WalkConcurrency requests in flight: listing a node
// and reading each contender are separate pieces of work, so a wide tree
// and a long queue are read alike. A server that takes many reads in one
// request gets them in batches (walkBatch).
func Read(ctx context.Context, c *zkconn.Client, root string) (Tree, error) {
	if err := zkconn.ValidatePath(root); err != nil {
		return Tree{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &walk{c: c, root: root, cancel: cancel}
	w.wake = sync.NewCond(&w.mu)
	workers := WalkConcurrency
	// The root's listing tells whether the server takes batches.
	err := zkconn.ErrMultiReadUnsupported
	if !oneByOne {
		err = w.listMany(ctx, []string{root})
	}
	switch {
	case errors.Is(err, zkconn.ErrMultiReadUnsupported):
		w.todo = nil
		w.push(func(ctx context.Context) error { return w.list(ctx, root) })
	case err != nil:
		return Tree{}, err
	default:
		workers = walkBatchConcurrency
	}
	var pool sync.WaitGroup
	for range workers {
		pool.Add(1)
		go func() {
			defer pool.Done()
			w.work(ctx)
		}()
	}
	pool.Wait()
	if w.err != nil {
		return Tree{}, w.err
	}
	t := Tree{Skipped: w.skipped, Listed: w.listedNodes}
	t.Queues = withSuccesses(recipe.Semaphores(w.queues), w.success)
	sort.Slice(t.Queues, func(i, j int) bool { return t.Queues[i].Path < t.Queues[j].Path })
	sort.Strings(t.Skipped)
	sort.Strings(t.Listed)
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
	queues  []recipe.Queue
	skipped []string
	// listedNodes are the nodes whose children were listed.
	listedNodes []string
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
	if ok, err := w.listable(p, err); !ok {
		return err
	}
	subs, refs, err := w.listed(ctx, p, children)
	for _, sub := range subs {
		w.push(func(ctx context.Context) error { return w.list(ctx, sub) })
	}
	for _, r := range refs {
		w.push(func(ctx context.Context) error { return w.read(ctx, r.q, r.i, r.ct) })
	}
	return err
}

// listMany lists paths in one request, and queues what they hold in
// batches: the nodes below them to list, the contenders to read.
func (w *walk) listMany(ctx context.Context, paths []string) error {
	reads := make([]zkconn.Read, len(paths))
	for i, p := range paths {
		reads[i] = zkconn.Read{Path: p, Children: true}
	}
	res, err := w.c.MultiRead(ctx, reads)
	if err != nil {
		return err
	}
	var subs []string
	var refs []contender
	for i, p := range paths {
		if ok, err := w.listable(p, res[i].Err); !ok {
			if err != nil {
				return err
			}
			continue
		}
		s, r, err := w.listed(ctx, p, res[i].Children)
		if err != nil {
			return err
		}
		subs, refs = append(subs, s...), append(refs, r...)
	}
	for len(subs) > 0 {
		n := min(len(subs), walkBatch)
		chunk := subs[:n:n]
		w.push(func(ctx context.Context) error { return w.listMany(ctx, chunk) })
		subs = subs[n:]
	}
	for len(refs) > 0 {
		n := min(len(refs), walkBatch)
		chunk := refs[:n:n]
		w.push(func(ctx context.Context) error { return w.readMany(ctx, chunk) })
		refs = refs[n:]
	}
	return nil
}

// listable judges the listing of p: a node gone has nothing to list, one
// this client may not list (other than the root) is skipped, any other
// error ends the walk.
func (w *walk) listable(p string, err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, zk.ErrNoNode):
		return false, nil
	case p != w.root && zkconn.IsPermission(err):
		w.mu.Lock()
		w.skipped = append(w.skipped, p)
		w.mu.Unlock()
		return false, nil
	}
	return false, err
}

// contender is one contender of a queue being read.
type contender struct {
	q  *pendingQueue
	i  int // its place in q
	ct recipe.Contender
}

// listed takes the children of p: it returns the nodes below p to list and
// the contenders to read, and queues the reading of a success record.
func (w *walk) listed(ctx context.Context, p string, children []string) (subs []string, refs []contender, err error) {
	w.mu.Lock()
	w.listedNodes = append(w.listedNodes, p)
	w.mu.Unlock()
	cs, err := recipe.Queued(ctx, w.c, p, children)
	if err != nil {
		return nil, nil, err
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
			subs = append(subs, sub)
		}
	}
	if len(cs) > 0 {
		q := &pendingQueue{path: p, entries: make([]recipe.Entry, len(cs)), found: make([]bool, len(cs)), left: len(cs)}
		for i, ct := range cs {
			refs = append(refs, contender{q, i, ct})
		}
	}
	return subs, refs, nil
}

// pendingQueue is a queue whose contenders are being read; the last read
// completes it.
type pendingQueue struct {
	path    string
	entries []recipe.Entry
	found   []bool // the contender was still there
	left    int
}

func (w *walk) read(ctx context.Context, q *pendingQueue, i int, ct recipe.Contender) error {
	e, ok, err := recipe.ReadEntry(ctx, w.c, q.path, ct)
	if err != nil {
		return err
	}
	w.readOne(q, i, e, ok)
	return nil
}

// readMany reads contenders in one request. One this client may not read
// is read again alone, for the stat that needs no read right.
func (w *walk) readMany(ctx context.Context, refs []contender) error {
	reads := make([]zkconn.Read, len(refs))
	for i, r := range refs {
		reads[i] = zkconn.Read{Path: zkconn.Join(r.q.path, r.ct.Name)}
	}
	res, err := w.c.MultiRead(ctx, reads)
	if err != nil {
		return err
	}
	for i, r := range refs {
		switch err := res[i].Err; {
		case err == nil:
			w.readOne(r.q, r.i, recipe.EntryOf(ctx, w.c, r.q.path, r.ct, res[i].Data, res[i].Stat), true)
		case errors.Is(err, zk.ErrNoNode):
			w.readOne(r.q, r.i, recipe.Entry{}, false)
		case zkconn.IsPermission(err):
			if err := w.read(ctx, r.q, r.i, r.ct); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return nil
}

// readOne records contender i of q (ok: it was still there); the last one
// read completes the queue.
func (w *walk) readOne(q *pendingQueue, i int, e recipe.Entry, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q.entries[i], q.found[i] = e, ok
	if ok && e.Unreadable {
		w.skipped = append(w.skipped, zkconn.Join(q.path, e.Name))
	}
	if q.left--; q.left > 0 {
		return
	}
	var entries []recipe.Entry
	for i, e := range q.entries {
		if q.found[i] {
			entries = append(entries, e)
		}
	}
	if len(entries) > 0 {
		w.queues = append(w.queues, recipe.NewQueue(q.path, entries))
	}
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
func withSuccesses(lqs []recipe.Queue, records map[string]*success.Record) []Queue {
	qs := make([]Queue, len(lqs), len(lqs)+len(records))
	for i, q := range lqs {
		qs[i].Queue = q
		if s, ok := records[q.Path]; ok {
			qs[i].LastSuccess = s
			delete(records, q.Path)
		}
	}
	for p, s := range records {
		qs = append(qs, Queue{Queue: recipe.Queue{Path: p}, LastSuccess: s})
	}
	return qs
}
