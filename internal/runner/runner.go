// Package runner is zklock's run and tryrun: connect, take the locks, run
// the command under them, release. It owns the process's signal handling for
// the whole of that time, so a signal is never lost between waiting and
// running.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// Options describe one run or tryrun.
type Options struct {
	Conn zkconn.Options
	// Paths are the locks to hold, all at once. They are taken in sorted
	// order, whatever order they were given in, so two jobs naming the same
	// paths can never deadlock; they are released together (see finish).
	Paths []string
	Argv  []string
	// Mode is what to take at every path; Flavor picks the node names.
	Mode   recipe.Mode
	Flavor recipe.Flavor
	// Wait is how long to wait for the locks.
	Wait waitlimit.Limit
	// ConflictCode is the exit code for busy and wait timeouts.
	ConflictCode int
	// Version goes into the node data.
	Version string
	OnLost  lockexec.Policy
	// OnRevoke is what to do when someone revokes the lock while the
	// command runs: stop it and release (Terminate), or let it finish and
	// show the revocation as pending (Ignore).
	OnRevoke   lockexec.Policy
	KillGrace  time.Duration
	MaxRuntime time.Duration
	// OncePer runs the command only if it has not succeeded under the lock
	// within this window (see once.go); zero runs it every time.
	OncePer time.Duration
	// Supersede, if set, waits in a superseding queue: a newer contender
	// (or one with a higher order key) takes this one's place while it
	// waits (recipe.Supersede).
	Supersede *recipe.Supersede
	// OrderKey, if set, is this run's place in the order its runs must
	// succeed in (a pipeline number): the command runs only if no run
	// with a higher key has succeeded, and its success records it
	// (outdated.go). A superseding queue orders its waiters by it too.
	OrderKey *int64
	// Pool, if set, takes Pool.Take of its members under the one path
	// instead of the path itself (recipe.AcquirePool); the command learns
	// which from ZKLOCK_RESOURCES.
	Pool *recipe.Pool
	// Logf prints progress for -v, and is nil without it: what only -v
	// shows is then not worked out. Warnf prints warnings; it may be nil.
	Logf, Warnf func(format string, args ...any)
	// Events, if set, is told what the run does (events.go).
	Events Events
	// Waits says how closely Events follows a wait (WaitStatus).
	Waits Waits

	marks     *marks        // phase marks for the benchmark driver (marks.go)
	wd        *lazyWatchdog // started when a lock is about to be held
	gc        gcPolicy      // the collector's settings (memory.go)
	heldSince time.Time     // when the first lock was taken, for Released
	reported  bool          // the outcome's event is out (reportOutcome)
	lost      *sync.Once    // the Lost event is out (lostOnce)
	placed    bool          // the session of this attempt has a node in a queue (lockAll)
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

func (o *Options) warnf(format string, args ...any) {
	if o.Warnf != nil {
		o.Warnf(format, args...)
	}
}

// Run takes the locks, runs the command, and releases the locks. The error
// carries the outcome: nil, the command's *lockexec.ExitError, or why the
// command did not run or was stopped.
func Run(ctx context.Context, o Options) (err error) {
	defer func() { o.reportOutcome(err) }()
	// A command that cannot be found fails now, not after a wait in the
	// queue; this also keeps the PATH search off the path from the lock's
	// release to the command's start.
	cmdPath, err := lockexec.Resolve(o.Argv)
	if err != nil {
		return err
	}
	if err := o.checkEnvironment(); err != nil {
		return err
	}
	sigs := catchSignals()
	defer signal.Stop(sigs)
	o.gc = quietGC()

	o.Paths = canonical(o.Paths)
	o.marks = openMarks()
	defer o.marks.close()
	o.wd = newLazyWatchdog(o.warnf)
	defer o.wd.retire()

	me := owner.New(o.Version, o.Argv, o.Mode)
	if o.Supersede != nil {
		s := *o.Supersede
		s.Key = o.OrderKey // one key: the queue's order is the runs' order
		o.Supersede, me.Supersede = &s, &s
	}
	me.OrderKey = o.OrderKey
	client, h, err := acquire(ctx, &o, sigs, me)
	if err != nil {
		return err
	}
	leases := h.leases
	acquired := me.AcquiredNow() // the record settleAfter writes
	o.marks.mark("acquired")
	defer func() {
		o.reportOutcome(err) // before the release, which follows it
		if errors.Is(err, lockexec.ErrLockLost) {
			// The server is most likely out of reach: don't hold up exit
			// 76. Closing removes the nodes if the server can still be
			// told; otherwise the session expires.
			client.Close()
			return
		}
		o.finish(client, leases)
		o.marks.mark("released")
	}()

	var once *recipe.Lease
	if o.OncePer > 0 {
		if once, err = o.checkOnce(ctx, client, h, me); err != nil {
			return err
		}
	}
	if o.OrderKey != nil {
		// The last check before the command starts, under the lock, so
		// that an older run that waited cannot go past a newer success.
		if once, err = o.checkOutdated(ctx, client, h); err != nil {
			return err
		}
	}
	// The command is about to run: the watchdog starts now unless the wait
	// started it (see lazyWatchdog), in the background, so that its fork
	// and the quorum's confirmation take their time together; the command
	// starts only once both are done, and lockexec.Supervise arms it.
	o.wd.start()
	env, err := environment(ctx, client, h)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	budget := NewBudget(client.Contact().Timeout, o.KillGrace)
	if len(leases) > 0 {
		o.confirmQuorum(ctx, client, budget)
	}
	wd := o.wd.wait()
	lost, revoked := o.guard(runCtx, client, h, wd)
	o.lost = new(sync.Once)
	probe := newLateProbe(client, lockexec.GroupAlive)
	lost = o.reportLoss(runCtx, client, lost, wd, probe)
	settled := o.settleAfter(settleDelay, leases, acquired)
	defer settled.stop()
	o.marks.mark("command")
	stopProbe := probe.watch()
	err = lockexec.Supervise(runCtx, lockexec.Spec{
		Argv:          o.Argv,
		Path:          cmdPath,
		Env:           env,
		Signals:       sigs,
		Lost:          lost,
		OnLost:        o.OnLost,
		Revoked:       o.revocations(runCtx, leases, revoked, me),
		OnRevoke:      o.OnRevoke,
		KillGrace:     o.KillGrace,
		LostKillGrace: budget.Grace,
		MaxRuntime:    o.MaxRuntime,
		Watchdog:      wd,
		Warn:          func(s string) { o.warnf("%s", s) },
		Started: func(pid int) {
			probe.started(pid)
			o.emit(Started{PID: pid})
		},
	})
	seen := stopProbe()
	o.reportLostBy(client, err)
	err = o.reportLate(err, seen)
	if err == nil && once != nil {
		o.recordSuccess(client, once, me)
	}
	return err
}

// guard watches what the command runs under: the locks taken (see guard),
// which also renews the watchdog's deadlines, and the locks re-entered.
// lost carries the first loss, revoked each revocation request.
func (o *Options) guard(ctx context.Context, client *zkconn.Client, h held, wd *lockexec.Watchdog) (lost <-chan error, revoked <-chan *recipe.RevokedError) {
	// The ancestors' zklocks guard the locks re-entered, but release
	// them when their own commands exit: a re-entered run left in the
	// background would go on without its lock. Their nodes' deletion
	// stops the command as a lost lock does.
	var inheritedLost <-chan error
	if len(h.inherited) > 0 {
		var nodes []string
		for _, in := range h.inherited {
			nodes = append(nodes, in.Node)
		}
		inheritedLost = recipe.WatchHeld(ctx, client, nodes)
	}
	if len(h.leases) == 0 {
		return inheritedLost, nil
	}
	g := &guard{src: client, clock: realClock{}, killGrace: o.KillGrace, logf: o.Logf}
	// The watchdog enforces the same deadlines as the guard, from outside
	// this process: renewed on every confirmation from the ensemble, so a
	// stopped or starved zklock cannot outlive its lock through its
	// command. Under --on-lost ignore it only watches for zklock's death.
	if o.OnLost == lockexec.Terminate {
		g.renew = wd.Renew
	}
	return guardLeases(ctx, g, h.leases, inheritedLost), revokeRequests(ctx, h.leases)
}

// confirmQuorum waits, before the command starts, until the syncs that
// keep QuorumHeard fresh are in effect (zkconn's ConfirmQuorum): they
// started when this run became next in line, and a run that learned it
// was next only on taking the lock has a QuorumHeard as old as its last
// write. On a healthy ensemble that is one round trip at most, mostly
// spent while the watchdog starts. It waits no longer than the session
// timeout: by then the session has come back on some server or is lost.
// Whatever it finds, the guard then counts from the QuorumHeard there is.
func (o *Options) confirmQuorum(ctx context.Context, client *zkconn.Client, b Budget) {
	cctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	if err := client.ConfirmQuorum(cctx); err != nil {
		o.logf("the quorum has not confirmed the session (%v); its last confirmation is %s old",
			err, time.Since(client.QuorumHeard()).Round(time.Millisecond))
	}
}

// revokeRequests passes on the revocation requests written into any of
// leases. The goroutines end with ctx.
func revokeRequests(ctx context.Context, leases []*recipe.Lease) <-chan *recipe.RevokedError {
	out := make(chan *recipe.RevokedError, len(leases))
	for _, l := range leases {
		go func() {
			for {
				select {
				case r := <-l.Revoked():
					select {
					case out <- r:
					default: // an earlier request is still unread
					}
				case <-l.Done():
					return
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return out
}

// catchSignals catches the signals forwarded to the command: before it
// starts, each ends the wait (exit 128+N). A signal ignored on entry stays
// ignored, as a shell leaves it: `nohup zklock run …` and `zklock run … &`
// from a script start zklock with SIGHUP or SIGINT ignored, and catching it
// would undo that for the command too (exec resets a caught signal to its
// default, and zklock would forward a hangup to it). Go's runtime keeps
// only SIGHUP and SIGINT ignored from the start; the others it catches.
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 8)
	for _, sig := range lockexec.Forwarded {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	return sigs
}

// lazyWatchdog is the watchdog of a run, started only when a lock is about
// to be held: when recipe.Acquire says this run is next in line (so that the
// handoff does not wait for a process to start), or else once the locks are
// taken. A waiter deep in a queue is then one process, and a contender that
// never runs its command (a busy tryrun, a --once-per job that finds the
// job done) starts none.
//
// Starting late leaves the command no moment without its dead man's
// switch: wait returns only once StartWatchdog has returned, that is once
// the watchdog's exec has succeeded and it holds the read end of its pipe;
// Run calls it before lockexec.Supervise starts the command, and lockexec.Supervise
// arms it with the command's group right after the fork, as it did when
// the watchdog started with zklock. From the watchdog's start on, zklock's
// death closes the pipe under it whether or not it has begun to read, and
// the deadlines that the guard sends before the command starts are waiting
// in the pipe when it does.
//
// Once started, the watchdog is watched: if it ends while zklock still
// counts on it (an operator killed it), zklock says so at once, for from
// then on a frozen or killed zklock leaves the command running past the
// session's expiry.
type lazyWatchdog struct {
	warnf   func(string, ...any)
	once    sync.Once
	started atomic.Bool
	ready   chan struct{} // closed once the start has succeeded or failed
	wd      *lockexec.Watchdog
	quit    chan struct{} // closed by retire: stop watching
	watched chan struct{} // closed when the watching goroutine has ended
}

func newLazyWatchdog(warnf func(string, ...any)) *lazyWatchdog {
	return &lazyWatchdog{warnf: warnf, ready: make(chan struct{}), quit: make(chan struct{}), watched: make(chan struct{})}
}

// start starts the watchdog in the background, once; a failure is a
// warning, and the run goes on without it.
func (w *lazyWatchdog) start() {
	w.once.Do(func() {
		w.started.Store(true)
		go func() {
			defer close(w.ready)
			var err error
			if w.wd, err = lockexec.StartWatchdog(); err != nil {
				w.warnf("%v", err)
				close(w.watched)
				return
			}
			go w.watch(w.wd)
		}()
	})
}

// watch warns once if the watchdog ends before retire.
func (w *lazyWatchdog) watch(wd *lockexec.Watchdog) {
	defer close(w.watched)
	select {
	case <-wd.Gone():
		var werr *lockexec.WatchdogError
		if errors.As(wd.Err(), &werr) {
			// The command may own the terminal: see lockexec.WithoutSIGTTOU.
			lockexec.WithoutSIGTTOU(func() {
				w.warnf("the watchdog (pid %d) has ended: if zklock is now stopped or killed, the command runs on after its session expires", werr.Pid)
			})
		}
	case <-w.quit:
	}
}

// wait starts the watchdog if nothing has, and returns it once it runs;
// nil if it could not be started.
func (w *lazyWatchdog) wait() *lockexec.Watchdog {
	w.start()
	<-w.ready
	return w.wd
}

// retire ends the watchdog, if one was started.
func (w *lazyWatchdog) retire() {
	if w.started.Load() {
		w.wait().Retire() // nil-safe: a watchdog that failed to start is nil
		close(w.quit)
		<-w.watched
	}
}

// revokeNoteTimeout bounds noting a pending revocation in our node; it is
// only for display.
const revokeNoteTimeout = 5 * time.Second

// revocations passes the guard's revocation requests on to the command's
// supervisor. Each is first noted in the revoked node, so that list and
// holders show the holder and the pending revocation instead of the bare
// request: for as long as the command runs on under Ignore, and through
// the kill grace under Terminate, until the holder has released. The
// note costs the stop one write. The goroutine ends with ctx.
func (o *Options) revocations(ctx context.Context, leases []*recipe.Lease, in <-chan *recipe.RevokedError, me owner.Owner) <-chan error {
	out := make(chan error, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case r := <-in:
				lockexec.WithoutSIGTTOU(func() { o.emit(Revoked{r}) })
				noted := me
				noted.Revoke = r.Revocation
				nctx, cancel := context.WithTimeout(ctx, revokeNoteTimeout)
				for _, l := range leases {
					_ = l.MarkRevokePending(nctx, noted.Encode(), r)
				}
				cancel()
				select {
				case out <- r:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// canonical sorts the paths: every job takes shared paths in one order.
func canonical(paths []string) []string {
	out := append([]string(nil), paths...)
	sort.Strings(out)
	return out
}

// held is what a run holds: the locks it took, and those of an ancestor
// zklock that it re-entered.
type held struct {
	leases    []*recipe.Lease
	inherited []inherited
	// resources are the pool members the leases hold, in their order.
	resources []string
}

// environment tells the command what it holds, re-entered locks included.
// The singular variables name the first lock in canonical order; the plural
// ones list every lock, in that order, separated by spaces. EnvHeld carries
// the ancestors' entries on, with this zklock's own, so that a zklock started
// further down re-enters any of them.
func environment(ctx context.Context, c *zkconn.Client, h held) ([]string, error) {
	type one struct {
		path, node string
		token      int64
		hold       hold
	}
	var all []one
	chroot := "" // EnvHeld names nodes by their full path on the server
	if c != nil {
		chroot = c.Chroot()
	}
	for _, l := range h.leases {
		tok, err := l.FencingToken(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, one{l.Path, l.Node, tok, hold{Mode: l.Mode, Session: c.SessionID(), PID: os.Getpid(), Node: serverPath(chroot, l.Node)}})
	}
	for _, in := range h.inherited {
		passed := in.hold
		passed.Node = serverPath(chroot, in.Node)
		all = append(all, one{in.Path(), in.Node, in.Token, passed})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].path < all[j].path })
	var pool []string
	if len(h.resources) > 0 {
		pool = []string{EnvResources + "=" + strings.Join(h.resources, ",")}
	}
	var paths, nodes, tokens []string
	holds := parseHeld(os.Getenv(EnvHeld))
	for _, o := range all {
		paths = append(paths, o.path)
		nodes = append(nodes, o.node)
		tokens = append(tokens, strconv.FormatInt(o.token, 10))
		holds = slices.DeleteFunc(holds, func(h hold) bool { return h.Path() == o.hold.Path() })
		holds = append(holds, o.hold)
	}
	sort.SliceStable(holds, func(i, j int) bool { return holds[i].Path() < holds[j].Path() })
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, EnvHeld+"=") })
	return append(append(env,
		"ZKLOCK_PATH="+paths[0],
		"ZKLOCK_NODE="+nodes[0],
		"ZKLOCK_FENCING_TOKEN="+tokens[0],
		"ZKLOCK_PATHS="+strings.Join(paths, " "),
		"ZKLOCK_NODES="+strings.Join(nodes, " "),
		"ZKLOCK_FENCING_TOKENS="+strings.Join(tokens, " "),
		"ZKLOCK_SESSION_ID="+fmt.Sprintf("0x%x", uint64(all[0].hold.Session)),
		EnvHeld+"="+formatHeld(holds),
		// The command's parent: a script that re-runs itself under zklock
		// compares it with $PPID to know it already has (see
		// docs/guide/reentrancy.md).
		"ZKLOCK_PID="+strconv.Itoa(os.Getpid()),
	), pool...), nil
}

// finish ends the session, which releases every lock it holds: closing
// deletes all of the session's nodes in one transaction, so one round trip
// gives back all the locks at once (no lock is ever held without the ones
// taken before it, as releasing in reverse order would also ensure). If the
// connection is down, finish first waits for it: the close must reach the
// server. Both waits last as long as the session may (ReleaseDeadline),
// not a fixed time: on a loaded machine a server may be slow to come back
// or to answer, and a release that happened must not be warned about.
func (o *Options) finish(c *zkconn.Client, held []*recipe.Lease) {
	if len(held) == 0 {
		c.Close()
		return
	}
	var paths []string
	for _, l := range held {
		paths = append(paths, l.Path)
	}
	what := strings.Join(paths, " ")
	ctx, cancel := context.WithDeadline(context.Background(), c.ReleaseDeadline())
	defer cancel()
	switch err := c.WaitSession(ctx); {
	case err == nil:
		// A reconnect moved the session's life on: the close gets it
		// whole.
		ctx, cancel = context.WithDeadline(context.Background(), c.ReleaseDeadline())
		defer cancel()
	case zkconn.IsSessionLoss(err):
		// Expired: the server has deleted the nodes already.
		c.Close()
		o.reportRelease(paths, true, "the session had expired")
		return
	}
	if c.CloseAcked(ctx) {
		o.reportRelease(paths, true, "session closed")
		return
	}
	o.warnf("could not confirm the release of %s; the server drops it when the session expires, within %s",
		what, c.Contact().Timeout)
	o.reportRelease(paths, false, "")
}

// acquire connects and waits for the locks. A signal cancels the wait; the
// lock package then deletes our nodes, and Run exits 128+N.
func acquire(ctx context.Context, o *Options, sigs <-chan os.Signal, me owner.Owner) (*zkconn.Client, held, error) {
	waitCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case s := <-sigs:
			cancel(&SignalError{Signal: s.(syscall.Signal)})
		case <-stopWatch:
		}
	}()
	client, h, err := connectAndLock(waitCtx, o, me)
	close(stopWatch)
	<-watchDone

	// A signal may have landed just after the locks were taken: honour it
	// anyway, since the user asked zklock to stop.
	var sigErr *SignalError
	if errors.As(context.Cause(waitCtx), &sigErr) {
		err = sigErr
	}
	if err != nil {
		if client != nil {
			o.finish(client, h.leases)
		}
		return nil, held{}, err
	}
	return client, h, nil
}

// connectAndLock returns the session and the locks taken, also on error
// (a multi-path acquisition may fail after taking some): the caller's finish
// gives those back.
//
// Before it returns the locks, it checks that every node is still there and
// ours (recipe.VerifyAll). A waiter that lost its place, because its node was
// deleted or its session expired while it waited, never runs the command:
// it says so once, gives back what it holds, and joins the queue again at
// the back (with a new session if the old one is gone). --timeout counts
// the whole wait across such rejoins.
func connectAndLock(ctx context.Context, o *Options, me owner.Owner) (*zkconn.Client, held, error) {
	client, err := o.dial(ctx)
	if err != nil {
		return nil, held{}, err
	}
	o.adviseTimeout(client)
	in, take, err := o.reenter(ctx, client)
	if err != nil {
		return client, held{}, err
	}
	o.reportReentered(in)
	// A --once-per job that can see a fresh success does not join the
	// queue at all, and one that joins leaves it when a success is
	// recorded while it waits (fresh.go).
	var fresh *freshWatch
	if p := success.JobPath(o.Paths); o.OncePer > 0 && slices.Contains(take, p) {
		if fresh, err = o.watchSuccess(ctx, client, p); err != nil {
			return client, held{}, err
		}
	}
	// The timeout counts from here, with a session and about to join the
	// queue, not from before connecting; its one deadline covers every
	// path and every rejoin after a lost place.
	joined := time.Now()
	wait := o.Wait.From(joined)
	var pw *progressWatch
	if o.Waits != WaitsNone && o.Events != nil && !wait.IsNoWait() {
		pw = newProgressWatch(o.Events, o.Waits == WaitsLive, joined, wait)
	}
	defer func() {
		// Before the command starts, or the error is said.
		pw.close()
		o.emit(WaitOver{Waited: time.Since(joined)})
	}()
	unplaced := 0 // sessions lost in a row before they joined a queue
	for {
		o.placed = false
		lctx, stopFresh := fresh.during(ctx)
		leases, waitingOn, err := o.lockAll(lctx, client, take, me, wait, pw)
		if recent := stopFresh(); recent != nil && err != nil {
			return client, held{leases: leases}, recent
		}
		if err == nil {
			err = recipe.VerifyAll(ctx, leases)
		}
		var gone *recipe.NodeGoneError
		switch {
		case err == nil:
			return client, held{leases: leases, inherited: in, resources: o.resources(leases)}, nil
		case errors.As(err, &gone) && ctx.Err() == nil:
			o.warnf("%v; joining the queue again", err)
			giveBack(ctx, leases)
			continue
		case zkconn.IsSessionLoss(err) && !wait.IsNoWait() && ctx.Err() == nil:
			if o.placed {
				unplaced = 0
				o.warnf("%s lost its place in the queue (%v); joining again with a new session",
					strings.Join(o.Paths, " "), err)
			} else {
				// The session was lost before it had a node in any
				// queue: the link (or the session timeout) cannot keep
				// a session long enough to join. Trying again forever
				// would hang without a word; a few tries tell a blip
				// from a link that never works.
				unplaced++
				if unplaced == maxUnplacedSessions {
					client.Close()
					return nil, held{}, &UnkeptSessionError{Sessions: unplaced, Timeout: client.Contact().Timeout,
						RoundTrip: client.RoundTrip(), Safe: o.safeTimeout(client), Last: err}
				}
				o.warnf("session 0x%x was lost before it could join the queue (%v); trying again with a new session (%d of %d)",
					client.SessionID(), err, unplaced+1, maxUnplacedSessions)
			}
			client.Close()
			if client, err = o.redial(ctx, wait); err != nil {
				return nil, held{}, o.acquireErr(ctx, nil, waitingOn, err)
			}
			continue
		}
		return client, held{leases: leases}, o.acquireErr(ctx, client, waitingOn, err)
	}
}

// redial opens a new session to join again, within the wait's deadline.
func (o *Options) redial(ctx context.Context, wait recipe.Wait) (*zkconn.Client, error) {
	if d, ok := wait.Deadline(); ok {
		dctx, cancel := context.WithDeadlineCause(ctx, d, recipe.ErrWaitTimeout)
		defer cancel()
		client, err := o.dial(dctx)
		if err != nil && errors.Is(context.Cause(dctx), recipe.ErrWaitTimeout) {
			return nil, recipe.ErrWaitTimeout
		}
		return client, err
	}
	return o.dial(ctx)
}

// dial opens a session and says so with -v. The session follows the
// ensemble's membership: a holder or a waiter may outlive every server
// its connect string names (zkconn/follow.go).
func (o *Options) dial(ctx context.Context) (*zkconn.Client, error) {
	conn := o.Conn
	conn.FollowEnsemble = true
	client, err := zkconn.Dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	o.marks.mark("dialed")
	if o.Logf != nil {
		// Only for -v: SafeTimeout is a search, not worth a connect
		// that says nothing.
		o.Logf("connected to %s, session 0x%x, timeout %s (asked %s), round trip %s; the smallest session timeout that rides out a leader election of %s at this round trip is %s",
			client.Server(), client.SessionID(), client.NegotiatedTimeout(), o.Conn.SessionTimeout,
			roundTripText(client.RoundTrip()), ElectionAllowance, o.safeTimeout(client))
	}
	return client, nil
}

// safeTimeout is SafeTimeout for the client's connection and this run.
func (o *Options) safeTimeout(client *zkconn.Client) time.Duration {
	return SafeTimeout(client.RoundTrip(), o.Conn.TLS != nil, o.KillGrace)
}

// adviseTimeout says, once a session is up, when its timeout is too short
// for the round trip measured (ShortTimeout): before a wait and a command
// that a slow reply would then cut short. A timeout short only of riding
// out an election is said by -v and doctor (see LinkTimeout).
func (o *Options) adviseTimeout(client *zkconn.Client) {
	rtt, t := client.RoundTrip(), client.Contact().Timeout
	if t < LinkTimeout(rtt, o.Conn.TLS != nil, o.KillGrace) {
		safe := o.safeTimeout(client)
		o.emit(ShortTimeout{Timeout: t, Asked: o.Conn.SessionTimeout, RoundTrip: client.RoundTrip(), Safe: safe})
	}
}

// roundTripText shows a round trip to a tenth of a millisecond: on a
// local network it is well under one.
func roundTripText(d time.Duration) string {
	return d.Round(100 * time.Microsecond).String()
}

// lockAll takes the paths in order, and returns the leases taken (also on
// error) and the path it was waiting on last.
// With pw set, it tells pw where each wait stands.
func (o *Options) lockAll(ctx context.Context, client *zkconn.Client, paths []string, me owner.Owner, wait recipe.Wait, pw *progressWatch) ([]*recipe.Lease, string, error) {
	r := recipe.Request{Mode: o.Mode, Flavor: o.Flavor, Wait: wait, Data: me.Encode(), Supersede: o.Supersede,
		OnQueued: func() { o.placed = true }}
	var leases []*recipe.Lease
	if o.Pool != nil {
		return o.lockPool(ctx, client, paths, r, pw)
	}
	for _, path := range paths {
		began := time.Now()
		l, err := o.acquireOne(ctx, client, path, r, pw, func(lctx context.Context, r recipe.Request) ([]*recipe.Lease, error) {
			l, err := recipe.Acquire(lctx, client, path, r)
			return []*recipe.Lease{l}, err
		})
		if err != nil {
			return leases, path, err
		}
		if len(leases) == 0 {
			o.heldSince = time.Now()
		}
		o.reportAcquired(ctx, client, l[0], time.Since(began), "")
		leases = append(leases, l...)
	}
	return leases, "", nil
}

// acquireOne takes what take takes at path with r, telling pw and -v
// where each wait stands, and ends a wait behind an ancestor zklock.
func (o *Options) acquireOne(ctx context.Context, client *zkconn.Client, path string, r recipe.Request, pw *progressWatch,
	take func(context.Context, recipe.Request) ([]*recipe.Lease, error)) ([]*recipe.Lease, error) {
	// A wait behind an ancestor zklock would never end: the checks
	// of selfWatch end it (see SelfWaitError).
	lctx, cancel := context.WithCancelCause(ctx)
	self := newSelfWatch(lctx, client, cancel)
	r.OnNext = func() {
		// The guard will count from QuorumHeard: the syncs that
		// keep it fresh start now, a waiter further back sends
		// nothing but its pings (zkconn's KeepQuorumHeard).
		client.KeepQuorumHeard()
		// A --once-per job may find the job done once it holds the
		// lock, and then needs no watchdog.
		if o.OncePer == 0 {
			o.wd.start()
		}
	}
	r.OnWait = func(at recipe.Waiting) {
		o.gc.waiting()
		self.onWait(path, at)
		if pw != nil {
			pw.onWait(client, path, at)
		}
		o.logf("waiting for %s at position %d behind %s", path, at.Position, at.Ahead.Name)
	}
	leases, err := take(lctx, r)
	var selfErr *SelfWaitError
	if err != nil && errors.As(context.Cause(lctx), &selfErr) {
		err = selfErr
	}
	cancel(nil)
	self.done()
	return leases, err
}

// settleDelay is how long a command runs before its run counts as a long
// one (see settleAfter).
const settleDelay = time.Second

// markAcquiredTimeout bounds recording the acquisition time; it is only
// for display, and a session that cannot write it has other trouble that
// the guard reports.
const markAcquiredTimeout = 5 * time.Second

// settling is the work settleAfter scheduled; stop cancels it.
type settling struct {
	timer  *time.Timer
	cancel context.CancelFunc
	done   chan struct{} // closed when the work has run, or will not
}

// settleAfter does, once the command has run for d, what only a long run
// needs: it records in every node that waited the time the lock was taken
// (acquired, written by lock's MarkAcquired, for list, holders and a busy
// tryrun to show), and gives the process the default garbage collector
// back (memory.go). A command that ends sooner costs neither: no write, no
// wake-up of the waiter behind (whose watch on our node the write fires),
// no collection. Until the record is written, a reader shows when the
// holder joined the queue. stop cancels what has not run, and waits for
// what has started.
func (o *Options) settleAfter(d time.Duration, leases []*recipe.Lease, acquired owner.Owner) *settling {
	ctx, cancel := context.WithCancel(context.Background())
	s := &settling{cancel: cancel, done: make(chan struct{})}
	s.timer = time.AfterFunc(d, func() {
		defer close(s.done)
		o.gc.holding()
		data := acquired.Encode()
		var wg sync.WaitGroup
		for _, l := range leases {
			if !l.Waited() {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				wctx, cancel := context.WithTimeout(ctx, markAcquiredTimeout)
				defer cancel()
				_ = l.MarkAcquired(wctx, data)
			}()
		}
		wg.Wait()
	})
	return s
}

func (s *settling) stop() {
	s.cancel()
	if s.timer.Stop() {
		close(s.done)
	}
	<-s.done
}

// giveBack deletes the nodes of leases before joining again: the other
// jobs' watches fire as on any release.
func giveBack(ctx context.Context, leases []*recipe.Lease) {
	for _, l := range leases {
		_ = l.Release(ctx)
	}
}

// acquireErr classifies a failed acquisition: busy and timed out are
// conflicts (--conflict-exit-code), the rest stays as it is.
func (o *Options) acquireErr(ctx context.Context, client *zkconn.Client, waitingOn string, err error) error {
	var (
		busy       *recipe.BusyError
		superseded *recipe.SupersededError
	)
	switch {
	case errors.As(err, &busy):
		return &ConflictError{Err: busy, Code: o.ConflictCode}
	case errors.As(err, &superseded):
		return &ConflictError{Err: superseded, Code: o.ConflictCode}
	case errors.Is(err, recipe.ErrWaitTimeout) && ctx.Err() == nil:
		timeout, _ := o.Wait.Timeout()
		e := &WaitTimeoutError{Paths: o.Paths, After: timeout, Waiting: waitingOn}
		if client != nil && waitingOn != "" {
			e.Holders = holders(client, waitingOn)
		}
		return &ConflictError{Err: e, Code: o.ConflictCode}
	}
	return err
}

// holders reads who holds path, for a timeout message; nil if unknown.
func holders(c *zkconn.Client, path string) []recipe.Entry {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hs, err := recipe.Holders(ctx, c, path)
	if err != nil {
		return nil
	}
	return hs
}
