// Package runner is zklock's run and tryrun: connect, take the lock, run the
// command under it, release. It owns the process's signal handling for the
// whole of that time, so a signal is never lost between waiting and running.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// Signals are the signals zklock catches. While waiting, each ends the wait
// (exit 128+N); while the command runs, each is forwarded to it.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// releaseTimeout bounds the release after the command ends; past it the
// node goes anyway when the session is closed or expires.
const releaseTimeout = 5 * time.Second

// Options describe one run or tryrun.
type Options struct {
	Conn zkconn.Options
	Path string
	Argv []string
	// Try: run only if the lock is free now.
	Try bool
	// Timeout bounds the wait; 0 with Wait false means wait forever.
	Timeout    time.Duration
	HasTimeout bool
	// ConflictCode is the exit code for busy and wait timeouts.
	ConflictCode int
	// Version goes into the node data.
	Version    string
	OnLost     lockexec.Policy
	KillGrace  time.Duration
	MaxRuntime time.Duration
	// Logf prints progress for -v; Warnf prints warnings. Either may be nil.
	Logf, Warnf func(format string, args ...any)
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

// Run takes the lock, runs the command, and releases the lock. The error
// carries the outcome: nil, the command's *lockexec.ExitError, or why the
// command did not run or was stopped.
func Run(ctx context.Context, o Options) (err error) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, Signals...)
	defer signal.Stop(sigs)

	client, lease, err := acquire(ctx, &o, sigs)
	if err != nil {
		return err
	}
	defer func() {
		if errors.Is(err, lockexec.ErrLockLost) {
			// The server is most likely out of reach: a delete would only
			// hold up exit 76. Closing the session removes the node if the
			// server can still be told; otherwise the session expires.
			client.Close()
			return
		}
		rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		if rerr := lease.Release(rctx); rerr != nil {
			o.warnf("could not delete %s (%v); it goes when the session ends", lease.Node, rerr)
		} else {
			o.logf("released %s", lease.Path)
		}
		client.Close()
	}()

	token, err := lease.FencingToken(ctx)
	if err != nil {
		return err
	}
	env := append(os.Environ(),
		"ZKLOCK_PATH="+o.Path,
		"ZKLOCK_NODE="+lease.Node,
		"ZKLOCK_SESSION_ID="+fmt.Sprintf("0x%x", client.SessionID()),
		"ZKLOCK_FENCING_TOKEN="+strconv.FormatInt(token, 10),
	)

	budget := o.budget(client)
	o.logf("session timeout %s; if ZooKeeper is silent for %s the command is stopped (SIGTERM, then SIGKILL %s later), %s before the session could expire",
		budget.Timeout, budget.Deadline, budget.Grace, budget.Margin)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// Checking our node every T/10 keeps LastHeard fresh between
	// go-zookeeper's own pings (every T/3), so an outage of up to about
	// Deadline − T/10 ≈ 0.55·T heals without disturbing the command.
	lost := lease.Guard(runCtx, budget.Deadline, budget.Timeout/10)
	err = lockexec.Run(runCtx, lockexec.Spec{
		Argv:          o.Argv,
		Env:           env,
		Signals:       sigs,
		Lost:          lost,
		OnLost:        o.OnLost,
		KillGrace:     o.KillGrace,
		LostKillGrace: budget.Grace,
		MaxRuntime:    o.MaxRuntime,
		Warn:          func(s string) { o.warnf("%s", s) },
	})
	return err
}

// budget is how the session timeout is spent if contact is lost; see Budget.
func (o *Options) budget(c *zkconn.Client) Budget {
	t := c.NegotiatedTimeout()
	if t <= 0 {
		t = o.Conn.SessionTimeout
	}
	grace := o.KillGrace
	if grace <= 0 {
		grace = lockexec.DefaultKillGrace
	}
	return NewBudget(t, grace)
}

// acquire connects and waits for the lock. A signal cancels the wait; the
// lock package then deletes our node, and Run exits 128+N.
func acquire(ctx context.Context, o *Options, sigs <-chan os.Signal) (*zkconn.Client, *lock.Lease, error) {
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
	client, lease, err := connectAndLock(waitCtx, o)
	close(stopWatch)
	<-watchDone

	var sigErr *SignalError
	if cause := context.Cause(waitCtx); errors.As(cause, &sigErr) {
		// The signal may have landed just after the lock was taken: honour
		// it anyway, since the user asked zklock to stop.
		if lease != nil {
			lease.Release(context.Background())
		}
		if client != nil {
			client.Close()
		}
		return nil, nil, sigErr
	}
	if err != nil {
		if client != nil {
			client.Close()
		}
		return nil, nil, err
	}
	return client, lease, nil
}

func connectAndLock(ctx context.Context, o *Options) (*zkconn.Client, *lock.Lease, error) {
	start := time.Now()
	acqCtx := ctx
	try := o.Try || (o.HasTimeout && o.Timeout <= 0)
	if o.HasTimeout && !try {
		var cancel context.CancelFunc
		acqCtx, cancel = context.WithTimeoutCause(ctx, o.Timeout, ErrWaitTimeout)
		defer cancel()
	}
	client, err := zkconn.Dial(ctx, o.Conn)
	if err != nil {
		return nil, nil, err
	}
	o.logf("connected to %s, session 0x%x, timeout %s (asked %s)", client.Server(), client.SessionID(),
		client.NegotiatedTimeout(), o.Conn.SessionTimeout)

	owner := lock.NewOwner(o.Version, o.Argv, lock.Exclusive)
	lease, err := lock.Acquire(acqCtx, client, o.Path, lock.Options{
		Data: owner.Encode(),
		Kind: lock.Exclusive,
		Try:  try,
		OnWait: func(pos int, ahead lock.Contender) {
			o.logf("waiting at position %d behind %s", pos, ahead.Name)
		},
	})
	var busy *lock.BusyError
	switch {
	case err == nil:
		o.logf("acquired %s as %s after %s", o.Path, lease.Node, time.Since(start).Round(time.Millisecond))
		return client, lease, nil
	case errors.As(err, &busy):
		return client, nil, &ConflictError{Err: busy, Code: o.ConflictCode}
	case errors.Is(context.Cause(acqCtx), ErrWaitTimeout) && ctx.Err() == nil:
		return client, nil, &ConflictError{
			Err:  fmt.Errorf("%w %s after %s", ErrWaitTimeout, o.Path, o.Timeout),
			Code: o.ConflictCode,
		}
	}
	return client, nil, err
}
