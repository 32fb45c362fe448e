package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/zkconn"
)

// A cron storm: a thousand hosts start one --once-per job within a
// second. Only one may run it; the others must learn so cheaply, without
// each taking the lock in turn to read the record (a handoff each, 5ms
// apiece, one after the other).
//
// Before it joins the queue, a --once-per run reads the success record
// with a watch on it, and if there is one, reads the ensemble's clock
// with one write that joins nothing (zkconn.Client.ServerNow), and judges the
// record's age by the rule of clocks.go. A fresh success skips the run
// with no node created. Otherwise it joins, and the watch stays: a write
// to the record while it waits is a success recorded after the watch was
// asked for, so younger than the time since then on this process's own
// monotonic clock, with no clock of another machine involved. If that is
// within the window, the run leaves the queue (75) at once. Every waiter
// of the job watches the record, so a success wakes them all: that is the
// point, and it is bounded (one event per waiter per success, each
// answered by a read and the close of its session), while
// the lock path itself stays herd-free. The check made once the lock is
// held (checkOnce) still decides for those that get there.

// freshWatch is a --once-per run's watch on its success record.
type freshWatch struct {
	o     *Options
	c     *zkconn.Client
	path  string
	ev    <-chan zk.Event
	armed time.Time // when the watch was asked for
}

// watchSuccess reads the success record at path with a watch before the
// run joins the queue. A fresh success, by the youngest age the clocks
// give it, is a *ConflictError with a *RecentSuccessError, and nothing
// was created. Otherwise it returns the watch, to be kept while waiting.
func (o *Options) watchSuccess(ctx context.Context, c *zkconn.Client, path string) (*freshWatch, error) {
	f := &freshWatch{o: o, c: c, path: path}
	data, st, ok, err := f.arm(ctx)
	if err != nil && ctx.Err() == nil {
		// Unreadable or unreachable for now: join without the watch;
		// the check once the lock is held decides, and says why.
		o.logf("%s: could not read the success record before joining (%v)", path, err)
		return nil, nil
	}
	if err != nil || !ok {
		return f, err
	}
	rec := success.Of(path, data, st)
	stamp, err := c.ServerNow(ctx, zkconn.Join(path, stampName()))
	if err != nil {
		// The lock path went, say: nothing to judge by before joining;
		// the check once the lock is held decides.
		o.logf("%s: could not read the server's clock before joining (%v)", path, err)
		return f, nil
	}
	age, doubt := recordAge(rec, recipe.Modified(stamp), time.Now())
	if age < o.OncePer {
		if doubt == nil { // else the error says it all
			o.logf("%s; not joining the queue", o.skipLine(rec, age))
		}
		return nil, &ConflictError{Err: &RecentSuccessError{Last: rec, Age: age, Window: o.OncePer, Doubt: doubt}, Code: o.ConflictCode}
	}
	return f, nil
}

// arm sets an exists watch on the record, which fires on its creation,
// a write to it and its deletion, and reads the record if it exists. ok
// says whether it does.
func (f *freshWatch) arm(ctx context.Context) (data []byte, st *zk.Stat, ok bool, err error) {
	node := zkconn.Join(f.path, success.NodeName)
	f.armed = time.Now()
	if ok, _, f.ev, err = f.c.ExistsW(ctx, node); err != nil || !ok {
		return nil, nil, false, err
	}
	data, st, err = f.c.Get(ctx, node)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, false, nil // forgotten meanwhile; the watch says so
	}
	return data, st, err == nil, err
}

// during watches the record while the run waits in the queue: it returns
// a context for the wait, which a success recorded meanwhile cancels, and
// a function that ends the watch and returns that success's
// *ConflictError, or nil. A nil f watches nothing.
func (f *freshWatch) during(ctx context.Context) (context.Context, func() error) {
	if f == nil || f.ev == nil {
		return ctx, func() error { return nil }
	}
	wctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			var e zk.Event
			var open bool
			select {
			case e, open = <-f.ev:
			case <-wctx.Done():
				return
			}
			if !open {
				return
			}
			switch e.Type {
			case zk.EventNodeCreated, zk.EventNodeDataChanged:
				if bound := time.Since(f.armed); bound < f.o.OncePer {
					cancel(f.recent(wctx, bound))
					return
				}
			case zk.EventNodeDeleted: // forgotten: watch for the next one
			default:
				return // the session's watches are gone; checkOnce decides
			}
			if _, _, _, err := f.arm(wctx); err != nil {
				return
			}
		}
	}()
	return wctx, func() error {
		cancel(nil)
		wg.Wait()
		var c *ConflictError
		if errors.As(context.Cause(wctx), &c) && errors.As(c.Err, new(*RecentSuccessError)) {
			return c
		}
		return nil
	}
}

// recent is the outcome of a success recorded while the run waited, at
// most bound ago: the record is read for who and when, as -v says.
func (f *freshWatch) recent(ctx context.Context, bound time.Duration) error {
	rec, ok, err := success.Read(ctx, f.c, f.path)
	if err != nil || !ok {
		rec = success.Record{Path: f.path}
	}
	f.o.logf("not running: %s succeeded while this run waited (%s ago at most, on this host's clock), within the window of %s; leaving the queue",
		f.path, roundAge(bound), f.o.OncePer)
	return &ConflictError{Err: &RecentSuccessError{Last: rec, Age: bound, Window: f.o.OncePer}, Code: f.o.ConflictCode}
}

// stampName is the name of the node zkconn.Client.ServerNow creates and deletes at
// once: no contender's (no sequence number, none of Curator's or Kazoo's
// markers), and unique, so two runs' stamps never collide.
func stampName() string {
	var b [8]byte
	rand.Read(b[:])
	return "zklock.stamp." + hex.EncodeToString(b[:])
}
