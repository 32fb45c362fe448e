package runner

import (
	"context"
	"fmt"
	pathpkg "path"
	"sync"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// SelfWaitError means the lock this zklock was about to wait for is held
// by one of its own ancestors, a zklock on this host whose command (this
// zklock's ancestry) runs under it: the wait would never end. EnvHeld
// would have let it re-enter; it did not arrive, because something on the
// way dropped the environment (env -i, setpriv, sudo's env_reset).
//
// zklock does not re-enter in its place. The environment was dropped on
// purpose, often at a privilege boundary (sudo to another user), and a
// command below it that runs under a lock taken above it, without the
// ZKLOCK_* variables that tell it so, is a mistake to show, not to paper
// over: one line says which ancestor holds the lock and how to pass the
// variables on.
type SelfWaitError struct {
	Path string
	Node string // the ancestor's node
	PID  int    // the ancestor zklock
	Cmd  string // its command line
}

func (e *SelfWaitError) Error() string {
	return fmt.Sprintf("%s is held by zklock pid %d (%s), an ancestor of this one, which waits for this command: waiting would never end",
		e.Path, e.PID, e.Cmd)
}

// selfWatch checks, each time a wait starts, whether the contenders it
// waits behind are an ancestor zklock's, and cancels the wait with a
// *SelfWaitError if so. The checks run beside the wait (OnWait must not
// block it) and end with it: wait for them with done.
type selfWatch struct {
	c      *zkconn.Client
	cancel context.CancelCauseFunc
	ctx    context.Context
	wg     sync.WaitGroup
	seen   map[string]bool // nodes checked already
	// ancestry says whether an ancestor of this process runs zklock; only
	// then are the nodes read. Unknown until the first wait.
	ancestry, known bool
}

func newSelfWatch(ctx context.Context, c *zkconn.Client, cancel context.CancelCauseFunc) *selfWatch {
	return &selfWatch{c: c, ctx: ctx, cancel: cancel, seen: map[string]bool{}}
}

// onWait checks the holder and the contender ahead of a wait at path. An
// ancestor that holds the lock is the holder, or a reader the wait queues
// behind; as the others ahead leave, each wait starts again, and the
// ancestor becomes the one ahead.
func (s *selfWatch) onWait(path string, at recipe.Waiting) {
	if !ancestryKnown {
		return
	}
	if !s.known {
		// A wait behind an ancestor needs an ancestor that runs zklock:
		// without one (a cron storm, any job started by a scheduler) the
		// wait costs no read.
		s.ancestry, s.known = zklockAncestor(), true
	}
	if !s.ancestry {
		return
	}
	for _, node := range []string{at.Holder, zkconn.Join(pathpkg.Dir(at.Node), at.Ahead.Name)} {
		if node == "" || s.seen[node] {
			continue
		}
		s.seen[node] = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if e := s.check(path, node); e != nil {
				s.cancel(e)
			}
		}()
	}
}

// check reads node and tells whether an ancestor zklock of this process,
// on this host and in its PID namespace, wrote it. Its data comes from the server; the pid must be
// an ancestor's now and its process must have started before the zklock
// wrote the node (else the pid was reused).
func (s *selfWatch) check(path, node string) *SelfWaitError {
	data, _, err := s.c.Get(s.ctx, node)
	if err != nil {
		return nil // gone, or unreadable: nothing to conclude
	}
	d := owner.Decode(data)
	if !d.ByZklock || d.Owner.Host != hostname() || d.Owner.PID <= 1 || !d.Owner.SamePIDNamespace() {
		return nil
	}
	if !isAncestor(d.Owner.PID) || startedAfter(d.Owner.PID, d.Owner.Since) {
		return nil
	}
	return &SelfWaitError{Path: path, Node: node, PID: d.Owner.PID, Cmd: d.Owner.CommandLine()}
}

// done waits for the checks started so far.
func (s *selfWatch) done() { s.wg.Wait() }
