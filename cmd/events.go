package cmd

import (
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/view"
)

// runReport tells what a run or tryrun does, as the runner reports it
// (runner.Events), to each of its readers: the lines on stderr (with -v,
// or JSON), the status line, systemd (notify.go) and the metrics file
// (metrics.go). Any of the last three may be nil.
type runReport struct {
	u       *ui
	status  *view.StatusLine
	notify  *notifier
	metrics *metricsRun

	mu sync.Mutex // events come from several goroutines: one at a time
}

// newRunReport starts the report of a run, before its options are
// validated, so that a run that fails validation still ends with its
// exit event.
func newRunReport(u *ui) *runReport { return &runReport{u: u} }

// attach wires the report into a validated run: the metrics, the status
// line, systemd, and how closely the wait is followed. Only a validated
// run is counted in the metrics: a run refused for its flags never
// reached a lock path, and a typo's path would add series that no later
// run updates or removes.
func (r *runReport) attach(ro *runner.Options, o *runOptions) {
	u := r.u
	if o.MetricsFile != "" {
		r.metrics = &metricsRun{file: string(o.MetricsFile), paths: slices.Sorted(slices.Values(o.Paths))}
	}
	if u.json == nil {
		// (tryrun never waits, so its status line is never drawn.)
		r.status = view.NewStatusLine(u.err, canDraw(u.err, os.Getenv), o.Progress, func() int { return terminalWidth(u.err) })
		u.status = r.status
	}
	r.notify = newNotifier(os.Getenv, o.NotifyReady, u.warnf)
	ro.Events = r
	switch {
	case r.status != nil, u.json != nil && o.Progress:
		// Someone watches the wait: follow the holder too.
		ro.Waits = runner.WaitsLive
	case u.json != nil, r.notify != nil:
		ro.Waits = runner.WaitsPlaced
	}
}

// Event hands e to each reader.
func (r *runReport) Event(e runner.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != nil {
		switch e := e.(type) {
		case runner.WaitStatus:
			r.status.Waiting(e)
		case runner.WaitOver:
			r.status.Done()
		}
	}
	r.u.event(e)
	r.notify.event(e)
	r.metrics.event(e)
}

// finish ends the report once the run's exit code is known: the metrics
// file is written (a failure is a warning, never the run's), systemd's
// socket closed.
func (r *runReport) finish(code int, outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.metrics.write(code, outcome); err != nil {
		r.u.warnf("could not write the metrics file: %v", err)
	}
	r.notify.close()
}

// event writes e on stderr: as JSON, or, with -v, the line that -v has
// always printed for it. The other events are said by the final message
// (busy, skipped), by the supervisor's warnings (lost, revoked) or by the
// status line (waiting).
func (u *ui) event(e runner.Event) {
	if e, ok := e.(runner.ShortTimeout); ok {
		// A warning in either format.
		u.warnf("%s", shortTimeoutText(e))
		return
	}
	if e, ok := e.(runner.PossibleOverlap); ok && u.json == nil {
		u.warnf("%s", view.Overlap(e))
		return
	}
	if u.json != nil {
		u.jsonEvent(e)
		return
	}
	switch e := e.(type) {
	case runner.Acquired:
		if !e.Reentered { // reentry says so itself
			u.logf("%s", view.Acquired(e))
		}
	case runner.Released:
		if e.Confirmed {
			u.logf("%s", view.Released(e))
		}
	}
}

// shortTimeoutText words a session timeout too short for the link, with
// the flag that lengthens it, or, when the servers granted less than was
// asked, the server setting that caps it.
func shortTimeoutText(e runner.ShortTimeout) string {
	return fmt.Sprintf("session timeout %s is shorter than %s, the smallest that rides out a leader election of %s at a round trip of %s: "+
		"an election or a slow reply may stop the command while ZooKeeper still keeps its lock (%s)",
		e.Timeout, e.Safe, runner.ElectionAllowance, e.RoundTrip.Round(100*time.Microsecond), timeoutFix(e.Timeout, e.Asked, e.Safe))
}

// timeoutFix says how to reach a safe session timeout: the flag, or, when
// the servers granted less than was asked, the server setting that caps it.
func timeoutFix(granted, asked, safe time.Duration) string {
	if granted < asked {
		return fmt.Sprintf("the servers granted %s of the %s asked: raise their maxSessionTimeout to %s or more", granted, asked, safe)
	}
	return fmt.Sprintf("--session-timeout %s or more", safe)
}

// jsonEvent writes e as one JSON object (one per path for Released), with
// the keys of docs/guide/events.md.
func (u *ui) jsonEvent(e runner.Event) {
	j := u.json
	switch e := e.(type) {
	case runner.WaitStatus:
		attrs := []slog.Attr{slog.Int("position", e.Position), slog.String("node", e.Node)}
		if e.Holder != nil {
			attrs = append(attrs, holderAttr(e.Holder.Contender, e.Holder.NodeData, e.Holder.HeldSince))
		}
		j.line(slog.LevelInfo, "waiting", oneLine(view.WaitSentence(e)), e.Path, attrs...)
	case runner.Acquired:
		attrs := []slog.Attr{slog.String("node", e.Node), slog.String("session", fmt.Sprintf("0x%x", uint64(e.Session))),
			slog.Int64("fencing_token", e.FencingToken), ms("wait_ms", e.Wait), slog.Bool("reentered", e.Reentered)}
		if e.Resource != "" {
			attrs = append(attrs, slog.String("resource", e.Resource))
		}
		j.line(slog.LevelInfo, "acquired", oneLine(view.Acquired(e)), e.Path, attrs...)
	case runner.Busy:
		d := owner.Decode(e.Data)
		attrs := []slog.Attr{holderAttr(e.Holder, d, d.Owner.HeldSince())}
		if e.Limit > 0 {
			attrs = append(attrs, slog.Int("limit", e.Limit))
		}
		at := e.Path
		if p := e.Pool; p != nil {
			at = p.Path
			if !p.Queued {
				attrs = append(attrs, slog.String("resource", path.Base(e.Path)))
			}
		}
		j.line(slog.LevelInfo, "busy", oneLine(view.Busy(e.BusyError)), at, attrs...)
	case runner.Skipped:
		level, msg := slog.LevelInfo, e.Error()
		if e.Doubt != nil {
			level, msg = slog.LevelWarn, message(e.RecentSuccessError, "")
		}
		j.line(level, "skipped", oneLine(msg), e.Last.Path, successAttr("last_success", e.Last),
			ms("age_ms", e.Age), ms("window_ms", e.Window))
	case runner.Superseded:
		by := []any{slog.String("node", e.By.Node)}
		if e.By.Host != "" {
			by = append(by, slog.String("host", e.By.Host), slog.Int("pid", e.By.PID))
		}
		if e.By.Key != nil {
			by = append(by, slog.Int64("order_key", *e.By.Key))
		}
		j.line(slog.LevelInfo, "superseded", oneLine(e.Error()), e.Path, slog.String("node", e.Node), slog.Group("by", by...))
	case runner.Outdated:
		last := successAttr("last_success", e.Last)
		last = slog.Group(last.Key, append(groupArgs(last), slog.Int64("order_key", e.Recorded()))...)
		j.line(slog.LevelInfo, "outdated", oneLine(e.Error()), e.Path, slog.Int64("order_key", e.Key), last)
	case runner.Lost:
		j.line(slog.LevelError, "lost", oneLine(fmt.Sprintf("lost the lock on %s: %v", e.Path, e.Err)), e.Path,
			slog.String("cause", lossCause(e.Err)), ms("quorum_heard_age_ms", e.QuorumHeardAge))
	case runner.PossibleOverlap:
		j.line(slog.LevelWarn, "possible_overlap", oneLine(view.Overlap(e)), e.Path,
			ms("late_ms", e.Late), ms("session_timeout_ms", e.Timeout))
	case runner.Revoked:
		j.line(slog.LevelWarn, "revoked", oneLine(e.Error()), e.Path, slog.String("node", e.Node), revokerAttr(e.Revocation))
	case runner.Started:
		j.line(slog.LevelInfo, "started", fmt.Sprintf("started the command, pid %d", e.PID), u.path, slog.Int("pid", e.PID))
	case runner.Released:
		for _, p := range e.Paths {
			j.line(slog.LevelInfo, "released", oneLine(view.Released(e)), p, ms("hold_ms", e.Hold), slog.Bool("confirmed", e.Confirmed))
		}
	}
}

// ms is a duration as a whole number of milliseconds.
func ms(key string, d time.Duration) slog.Attr { return slog.Int64(key, d.Milliseconds()) }

// holderAttr is the holder object: its node (below the lock path) and,
// for zklock's nodes, who and what it is; for another client's, the text
// its data holds (cut short: it may be a megabyte).
func holderAttr(c recipe.Contender, d owner.NodeData, since time.Time) slog.Attr {
	attrs := []any{slog.String("node", c.Name)}
	if d.ByZklock {
		o := d.Owner
		attrs = append(attrs, slog.String("user", o.User), slog.String("host", o.Host), slog.Int("pid", o.PID),
			slog.Any("cmd", nonNil(o.Cmd)))
	} else if d.Raw != "" {
		attrs = append(attrs, slog.String("client", view.CutLong(d.Raw)))
	}
	if !since.IsZero() {
		attrs = append(attrs, slog.String("since", jsonTime(since)))
	}
	return slog.Group("holder", attrs...)
}

// successAttr is a success record: when (the server's time) and where.
func successAttr(key string, s success.Record) slog.Attr {
	attrs := []any{slog.String("at", jsonTime(s.At))}
	if s.ByZklock {
		attrs = append(attrs, slog.String("user", s.Owner.User), slog.String("host", s.Owner.Host),
			slog.Int("pid", s.Owner.PID), slog.Any("cmd", nonNil(s.Owner.Cmd)))
	} else if s.Raw != "" {
		attrs = append(attrs, slog.String("client", view.CutLong(s.Raw)))
	}
	return slog.Group(key, attrs...)
}

// revokerAttr is who asked for a lock to be given up, as far as its
// record tells (nothing but when, for a Curator Revoker).
func revokerAttr(r recipe.Revocation) slog.Attr {
	attrs := []any{slog.String("at", jsonTime(r.At))}
	if r.Host != "" {
		attrs = append(attrs, slog.String("user", r.User), slog.String("host", r.Host), slog.Int("pid", r.PID))
	}
	return slog.Group("by", attrs...)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// pathOf is the first of the paths a command names with --path, in
// sorted order (ZKLOCK_PATH's), or its one --path; "" without.
func pathOf(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return slices.Min(paths)
}
