// Package follow follows the queues at or below a path as they change, for
// list --watch and holders --watch. ZooKeeper's watches drive it, not a
// timer: a child watch on each node that a listing lists (the path, the
// nodes between it and each lock path, each lock path, a semaphore's
// leases), and never a watch per contender, so a queue of thousands
// costs the server a handful of watches. A contender joins, leaves, takes
// the lock or is revoked (it then leaves) by a change of its lock path's
// children; that queue's contenders are read again then, and only then,
// and the rest of the tree is not read again.
package follow

import (
	"context"
	"errors"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/tree"
	"github.com/zklock/zklock/zkconn"
)

// Options describe one watch.
type Options struct {
	Conn zkconn.Options
	Path string
	// HoldersOnly follows who holds the lock at Path (holders); otherwise
	// every queue at or below Path (list).
	HoldersOnly bool
	// Show is called on Run's goroutine with the first snapshot, and
	// then with each one whose content or connection differs from the
	// one before. An error from it ends Run.
	Show func(Snapshot) error
	// Pace is the least time between two calls of Show: changes that
	// come sooner are read once it has passed, together, and shown as
	// one snapshot. Zero shows each change as it is read.
	Pace time.Duration
}

// Snapshot is what the watch shows at one moment.
type Snapshot struct {
	// Tree is list's answer: every queue at or below the path. A path
	// that does not exist (or no longer does) is an empty tree.
	Tree tree.Tree
	// Holders and LastSuccess are holders' answer.
	Holders     []recipe.Entry
	LastSuccess *success.Record
	// Changed is when this content was read first.
	Changed time.Time
	// Down is since when no connection carries a session, while one is
	// sought; zero while connected. The content is then the last read.
	Down time.Time
}

// sameContent reports whether two snapshots show the same queues. The
// nodes a listing went through are left out: an empty node created or
// reaped below the path changes nothing that is shown.
func sameContent(a, b Snapshot) bool {
	return reflect.DeepEqual(a.Tree.Queues, b.Tree.Queues) && reflect.DeepEqual(a.Tree.Skipped, b.Tree.Skipped) &&
		reflect.DeepEqual(a.Holders, b.Holders) && reflect.DeepEqual(a.LastSuccess, b.LastSuccess)
}

// Pauses between two attempts to open a session again, once the old one
// expired: from the first to the last, doubling. Each attempt itself waits
// up to the connect timeout for a server.
const (
	firstRetry = 100 * time.Millisecond
	lastRetry  = 2 * time.Second
)

// Run connects and shows the first snapshot, then one for every change,
// until ctx ends: that is its normal end, and it returns nil. A lost
// connection is shown (Snapshot.Down) and waited out; an expired session is
// replaced by a new one and every watch is set again. Failing to connect at
// first, or to read the path at all (its ACL), is an error.
func Run(ctx context.Context, o Options) error {
	c, err := zkconn.Dial(ctx, o.Conn)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	w := &watcher{o: o}
	for {
		err := w.follow(ctx, c)
		c.Close()
		if ctx.Err() != nil {
			return nil
		}
		if !zkconn.IsSessionLoss(err) {
			return err
		}
		if c, err = w.reopen(ctx); c == nil {
			return err
		}
	}
}

// watcher is one Run: what it showed last, and the watches of the current
// session.
type watcher struct {
	o     Options
	last  Snapshot
	shown bool
	// shownAt is when Show was called last.
	shownAt time.Time

	mu sync.Mutex
	// armed are the watches set on the server and not yet fired, by
	// kind and path (see key): one is never set twice.
	armed map[string]bool
	// changed are the paths whose watch fired since the last read.
	changed map[string]bool
	// wake receives a token when a watch fires; it holds one, so a
	// burst of changes makes one more read, not one per change.
	wake chan struct{}
	// tree is list's last read on this session, whole (fresh) or not
	// read yet: a change re-reads the subtree that changed, not all.
	tree  tree.Tree
	fresh bool
	// waiting are the goroutines that each wait for one watch to fire;
	// follow owns them and waits for them before it returns.
	waiting sync.WaitGroup
}

// follow shows the queues on session c until ctx ends or the session is
// lost for good.
func (w *watcher) follow(ctx context.Context, c *zkconn.Client) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		w.waiting.Wait()
	}()
	w.armed, w.changed, w.wake = map[string]bool{}, map[string]bool{}, make(chan struct{}, 1)
	w.tree, w.fresh = tree.Tree{}, false
	for {
		down, flip := c.Disconnected()
		if down.IsZero() {
			s, err := w.read(ctx, c)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case zkconn.IsConnectionLoss(err):
				// The connection dropped under the read: flip says
				// so, and the read is done again once it is back.
			case err != nil:
				return err
			default:
				if err := w.show(s, time.Time{}); err != nil {
					return err
				}
			}
		} else if err := w.show(w.last, down); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Lost():
			return c.LostErr()
		case <-flip:
		case <-w.wake:
		}
		if err := w.wait(ctx, c); err != nil {
			return err
		}
	}
}

// wait waits out the pace since the last snapshot shown, so that a burst
// of changes is read and shown once: a queue of a thousand changing
// several times a second would otherwise print a line of a quarter of a
// megabyte at each change.
func (w *watcher) wait(ctx context.Context, c *zkconn.Client) error {
	left := w.o.Pace - time.Since(w.shownAt)
	if w.o.Pace <= 0 || left <= 0 {
		return nil
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Lost():
		return c.LostErr()
	case <-t.C:
		return nil
	}
}

// show passes s on if it differs from what was shown last, in content or
// in connection.
func (w *watcher) show(s Snapshot, down time.Time) error {
	s.Down, s.Changed = down, w.last.Changed
	same := w.shown && sameContent(s, w.last)
	if !same {
		s.Changed = time.Now()
	}
	if same && s.Down.Equal(w.last.Down) {
		return nil
	}
	w.last, w.shown, w.shownAt = s, true, time.Now()
	return w.o.Show(s)
}

// reopen opens a new session after the old one was lost, showing the
// last content as disconnected meanwhile. It returns nil when ctx ends,
// or an error that trying again would not cure.
func (w *watcher) reopen(ctx context.Context) (*zkconn.Client, error) {
	down := w.last.Down
	if down.IsZero() {
		down = time.Now()
	}
	if err := w.show(w.last, down); err != nil {
		return nil, err
	}
	pause := firstRetry
	for {
		c, err := zkconn.Dial(ctx, w.o.Conn)
		switch {
		case err == nil:
			return c, nil
		case ctx.Err() != nil:
			return nil, nil
		case !errors.Is(err, zkconn.ErrUnavailable) && !zkconn.IsSessionLoss(err) && !zkconn.IsConnectionLoss(err):
			return nil, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
		pause = min(2*pause, lastRetry)
	}
}

// read reads the snapshot, after setting the watches that will tell of its
// next change: a change after the watch is set fires it, so none falls
// between a read and the next.
func (w *watcher) read(ctx context.Context, c *zkconn.Client) (Snapshot, error) {
	if w.o.HoldersOnly {
		if err := w.armPath(ctx, c); err != nil {
			return Snapshot{}, err
		}
		return w.readHolders(ctx, c)
	}
	if err := w.readTree(ctx, c); err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Tree: w.tree}, nil
}

// readTree brings list's tree up to date: all of it on a new session, and
// then the subtrees whose nodes' children changed. A lock's queue changing
// costs a read of that queue alone, however many others the tree holds.
func (w *watcher) readTree(ctx context.Context, c *zkconn.Client) (err error) {
	defer func() {
		if err != nil {
			// What was to be read again is read in full next time:
			// the subtrees not read yet are known no more.
			w.fresh = false
		}
	}()
	w.mu.Lock()
	stale := w.changed
	w.changed = map[string]bool{}
	w.mu.Unlock()
	if !w.fresh {
		stale = map[string]bool{w.o.Path: true}
	}
	// The nodes each read listed, by the subtree it read.
	found := map[string][]string{}
	for _, p := range w.outermost(stale) {
		// Its watch first, then its read: a change in between
		// fires the watch and is read next time.
		if p == w.o.Path {
			err = w.armPath(ctx, c)
		} else {
			_, err = w.armChildren(ctx, c, p)
		}
		if err != nil {
			return err
		}
		sub, err := tree.Read(ctx, c, p)
		if p != w.o.Path && zkconn.IsPermission(err) {
			// Its ACL changed since it was listed.
			sub, err = tree.Tree{Skipped: []string{p}}, nil
		}
		if err != nil {
			return err
		}
		w.tree = replaced(w.tree, p, sub)
		found[p] = sub.Listed
	}
	w.fresh = true
	// A node listed without a watch (for the first time, or its watch
	// fired) gets one only now, after it was read: it is read again, lest
	// a change fell in between, but after this read is shown. Read again
	// at once, a tree whose nodes change faster than it is read would
	// never be shown. Many of them are read again with the subtree that
	// listed them, in batches, as this read was; a few are read alone.
	again := map[string]bool{}
	for p, listed := range found {
		set, err := w.armAll(ctx, c, listed)
		if err != nil {
			return err
		}
		if len(set) > readAlone {
			again[p] = true
			continue
		}
		for _, l := range set {
			again[l] = true
		}
	}
	if len(again) > 0 {
		w.mu.Lock()
		for p := range again {
			w.changed[p] = true
		}
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// readAlone is how many nodes, newly watched below one subtree, are read
// again one by one; more are read again with the subtree. One read of a
// node costs a request or two and a merge into the whole tree; the
// subtree's read costs a fraction of a request per node, and one merge.
// Read one by one, the lock paths of a first read of 5,000 took 7s to
// show, against 45ms for the read itself.
const readAlone = 8

// outermost are the subtrees to read again for the changed nodes: a node
// below another is read with it. A semaphore's leases and mutex are read
// with the semaphore, which shows them as one queue; never above the path
// watched.
func (w *watcher) outermost(changed map[string]bool) []string {
	subtrees := map[string]bool{}
	for p := range changed {
		if b := path.Base(p); p != w.o.Path && (b == recipe.SemaphoreLeasesName || b == recipe.SemaphoreMutexName) {
			p = path.Dir(p)
		}
		subtrees[p] = true
	}
	var out []string
	for p := range subtrees {
		below := false
		for q := range subtrees {
			below = below || (q != p && within(p, q))
		}
		if !below {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// replaced is t with what it held at or below p replaced by sub, a read
// of p.
func replaced(t tree.Tree, p string, sub tree.Tree) tree.Tree {
	out := tree.Tree{Queues: append([]tree.Queue(nil), sub.Queues...), Skipped: append([]string(nil), sub.Skipped...),
		Listed: append([]string(nil), sub.Listed...)}
	for _, q := range t.Queues {
		if !within(q.Path, p) {
			out.Queues = append(out.Queues, q)
		}
	}
	for _, s := range t.Skipped {
		if !within(s, p) {
			out.Skipped = append(out.Skipped, s)
		}
	}
	for _, l := range t.Listed {
		if !within(l, p) {
			out.Listed = append(out.Listed, l)
		}
	}
	sort.Slice(out.Queues, func(i, j int) bool { return out.Queues[i].Path < out.Queues[j].Path })
	sort.Strings(out.Skipped)
	sort.Strings(out.Listed)
	return out
}

// readHolders reads who holds the lock at the path, and its last success.
// A semaphore's holders are its leases, one node below.
func (w *watcher) readHolders(ctx context.Context, c *zkconn.Client) (Snapshot, error) {
	if _, err := w.armChildren(ctx, c, recipe.SemaphoreLeases(w.o.Path)); err != nil {
		return Snapshot{}, err
	}
	hs, err := recipe.Holders(ctx, c, w.o.Path)
	if err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{Holders: hs}
	last, ok, err := success.Read(ctx, c, w.o.Path)
	switch {
	case err != nil && !zkconn.IsPermission(err):
		return Snapshot{}, err
	case ok:
		s.LastSuccess = &last
	}
	return s, nil
}

// armAll sets a child watch on each of paths that has none yet, and
// returns those it set. Up to tree.WalkConcurrency go out at once, as the
// tree's reads do: requests pipeline on the one connection, so a wide
// tree's watches cost the server's work per request, not a round trip
// each (one after another, 1,000 lock paths took 20s to show over a 20ms
// round trip). They are not batched as the tree's reads are (tree.Read's
// multiRead through zkconn.MultiRead): the server rebuilds each read of a
// multiRead without its watch flag, so a batch would set no watch. What
// this package reads, it reads through tree.Read, batches included.
func (w *watcher) armAll(ctx context.Context, c *zkconn.Client, paths []string) ([]string, error) {
	var (
		mu    sync.Mutex
		set   []string
		first error
		pool  sync.WaitGroup
	)
	todo := make(chan string)
	for range min(tree.WalkConcurrency, len(paths)) {
		pool.Add(1)
		go func() {
			defer pool.Done()
			for p := range todo {
				ok, err := w.armChildren(ctx, c, p)
				mu.Lock()
				if ok {
					set = append(set, p)
				}
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range paths {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		todo <- p
	}
	close(todo)
	pool.Wait()
	sort.Strings(set)
	return set, first
}

// armPath sets a child watch on the path, or, while it does not exist, a
// watch on its existence: a path that disappears shows as empty, and one
// that appears is followed.
func (w *watcher) armPath(ctx context.Context, c *zkconn.Client) error {
	p := w.o.Path
	if set, err := w.armChildren(ctx, c, p); set || err != nil || w.isArmed(key(childWatch, p)) {
		return err
	}
	// The path is missing. An existence watch still pending is enough;
	// it is never a reason to leave a path that exists without its child
	// watch. (One set while the path existed, when it was made again
	// between the two requests below, stays pending until the path goes:
	// checked first, it left a path deleted and made again under load
	// with no child watch once its first one fired, and the view stopped
	// showing its changes.)
	if w.isArmed(key(existsWatch, p)) {
		return nil
	}
	exists, _, ch, err := c.ExistsW(ctx, p)
	if err != nil {
		return err
	}
	w.await(ctx, key(existsWatch, p), p, ch)
	if exists {
		// Created between the two: its children need their watch.
		_, err = w.armChildren(ctx, c, p)
	}
	return err
}

// armChildren sets a child watch on p unless one is set already, and
// reports whether it set one. A node gone, or one this client may not
// list, gets none: its parent's watch tells when it changes.
func (w *watcher) armChildren(ctx context.Context, c *zkconn.Client, p string) (bool, error) {
	k := key(childWatch, p)
	if w.isArmed(k) {
		return false, nil
	}
	_, ch, err := c.ChildrenW(ctx, p)
	switch {
	case errors.Is(err, zk.ErrNoNode) || zkconn.IsPermission(err):
		return false, nil
	case err != nil:
		return false, err
	}
	w.await(ctx, k, p, ch)
	return true, nil
}

// The kinds of watch.
const (
	childWatch  = "children"
	existsWatch = "exists"
)

func key(kind, p string) string { return kind + " " + p }

func (w *watcher) isArmed(k string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armed[k]
}

// await records the watch k as set and waits, on a goroutine of its own,
// for it to fire (or for the session to close it), then asks for a read.
func (w *watcher) await(ctx context.Context, k, p string, ch <-chan zk.Event) {
	w.mu.Lock()
	w.armed[k] = true
	w.mu.Unlock()
	w.waiting.Add(1)
	go func() {
		defer w.waiting.Done()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		w.mu.Lock()
		delete(w.armed, k)
		w.changed[p] = true
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}()
}
