package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/zkconn"
)

// recordTimeout bounds writing the success record after the command: the
// command has succeeded whatever happens to the record.
const recordTimeout = 5 * time.Second

// checkOnce decides, once the locks are held, whether the command may run
// under OncePer. The record lives at success.JobPath. Its age is the youngest
// of the servers' (the record's mtime against the mtime of a write to our
// own node made now, so hosts whose clocks disagree decide alike) and the
// writer's (the clock of the host that wrote it): see recordAge,
// clocks.go. The command runs once that age has passed the window. It
// returns the lease at which to record a success.
func (o *Options) checkOnce(ctx context.Context, c *zkconn.Client, h held, me owner.Owner) (*recipe.Lease, error) {
	p := success.JobPath(o.Paths)
	for _, in := range h.inherited {
		if in.Path() == p {
			return nil, &OnceHeldError{Path: p, PID: in.PID}
		}
	}
	var l *recipe.Lease
	for _, x := range h.leases {
		if x.Path == p {
			l = x
		}
	}
	last, ok, err := success.Read(ctx, c, p)
	if err != nil || !ok {
		if !ok && err == nil {
			o.logf("%s: no success recorded yet; running", p)
		}
		return l, err
	}
	now, err := l.MarkAcquiredNow(ctx, me.AcquiredNow().Encode())
	if err != nil {
		return nil, err
	}
	age, doubt := recordAge(last, now, time.Now())
	if age < o.OncePer {
		if doubt == nil { // else the error says it all
			o.logf("%s", o.skipLine(last, age))
		}
		return nil, &ConflictError{Err: &RecentSuccessError{Last: last, Age: age, Window: o.OncePer, Doubt: doubt}, Code: o.ConflictCode}
	}
	o.logf("%s", o.runLine(last, age, doubt))
	return l, nil
}

// skipLine says, for -v, why a run does not go ahead: when and where the
// job last succeeded.
func (o *Options) skipLine(last success.Record, age time.Duration) string {
	where := last.Raw
	if last.ByZklock {
		where = last.Owner.Host
	}
	return fmt.Sprintf("not running: %s last succeeded %s ago (at %s, server time) on %s, within the window of %s",
		last.Path, roundAge(age), last.At.Format(time.RFC3339), where, o.OncePer)
}

// runLine says, for -v, why a run goes ahead: its last success is older
// than the window by every clock.
func (o *Options) runLine(last success.Record, age time.Duration, doubt *ClockDoubt) string {
	if doubt != nil {
		return fmt.Sprintf("%s: its last success is %s; running, as both ages have passed the window of %s", last.Path, doubt, o.OncePer)
	}
	return fmt.Sprintf("%s last succeeded %s ago (at %s, server time), before the window of %s; running",
		last.Path, roundAge(age), last.At.Format(time.RFC3339), o.OncePer)
}

// recordSuccess writes the success record while the lock is still held, so
// that the next holder sees it. A failure to write it costs a later run
// that would have been skipped, never a run that should have happened: it
// is a warning.
func (o *Options) recordSuccess(c *zkconn.Client, l *recipe.Lease, me owner.Owner) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	at, err := success.Write(ctx, c, l.Path, me, time.Now())
	if err != nil {
		o.warnf("could not record the success at %s: %v", l.Path, err)
		return
	}
	o.logf("recorded the success at %s (%s, server time)", l.Path, at.Format(time.RFC3339Nano))
}

// roundAge keeps an age readable: milliseconds while it is short, seconds
// after.
func roundAge(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
