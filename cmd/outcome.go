package cmd

import (
	"errors"
	"log/slog"
	"syscall"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// finish says how the command line ended: the message for err (if any),
// the run's metrics and, under JSON, the exit event, always the last line.
func (u *ui) finish(err error, code int, help string) {
	msg := message(err, help)
	// Under JSON, a busy lock and a skipped run were said by their own
	// events, with their details.
	said := msg != "" && !(u.json != nil && reportedByEvent(err))
	if said {
		u.errorf("%s", msg)
	}
	outcome := outcomeOf(err)
	if u.run != nil {
		u.run.finish(code, outcome)
	}
	if u.json == nil {
		return
	}
	level := slog.LevelInfo
	if said {
		level = slog.LevelError
	}
	attrs := []slog.Attr{slog.Int("exit_code", code), slog.String("outcome", outcome)}
	if sig := signalOf(err); sig != 0 {
		attrs = append(attrs, slog.String("signal", lockexec.SignalName(sig)))
	}
	u.json.line(level, "exit", "", u.path, attrs...)
}

// reportedByEvent: the runner's events said these outcomes already, with
// their details: expected outcomes, not zklock's errors.
func reportedByEvent(err error) bool {
	return errors.As(err, new(*recipe.BusyError)) || errors.As(err, new(*runner.RecentSuccessError)) ||
		errors.As(err, new(*recipe.SupersededError)) || errors.As(err, new(*runner.OutdatedError))
}

// groupArgs are a group attribute's members, to build on.
func groupArgs(a slog.Attr) []any {
	var out []any
	for _, m := range a.Value.Group() {
		out = append(out, m)
	}
	return out
}

// outcomeOf names how a run ended, as the exit event and the metrics'
// runs_total say it (promfile.Outcomes).
func outcomeOf(err error) string {
	var exit *lockexec.ExitError
	switch {
	case err == nil:
		return "success"
	case errors.As(err, new(*recipe.BusyError)):
		return "busy"
	case errors.As(err, new(*runner.RecentSuccessError)):
		return "skipped"
	case errors.Is(err, recipe.ErrSuperseded):
		return "superseded"
	case errors.As(err, new(*runner.OutdatedError)):
		return "outdated"
	case errors.As(err, new(*runner.WaitTimeoutError)):
		return "timeout"
	case errors.As(err, new(*runner.OverlapError)):
		// Before "lost": a loss zklock acted on too late to prove clean.
		return "possible_overlap"
	case errors.Is(err, lockexec.ErrLockLost):
		return "lost"
	case errors.Is(err, lockexec.ErrLockRevoked), errors.Is(err, recipe.ErrRevoked):
		return "revoked"
	case errors.As(err, new(*runner.SignalError)):
		return "interrupted"
	case errors.Is(err, lockexec.ErrMaxRuntime), errors.As(err, &exit):
		return "failure"
	}
	return "error"
}

// signalOf is the signal that ended the run: the one that killed the
// command, or the one that ended zklock's wait; 0 for none.
func signalOf(err error) syscall.Signal {
	var (
		exit *lockexec.ExitError
		sig  *runner.SignalError
	)
	switch {
	case errors.As(err, &sig):
		return sig.Signal
	case errors.As(err, &exit):
		return exit.Signal
	}
	return 0
}

// lossCause names why a lock was lost, for the lost event's cause.
func lossCause(err error) string {
	switch {
	case errors.Is(err, lockexec.ErrUnrenewed):
		// First: it wraps what the guard saw once zklock ran again.
		return "watchdog"
	case errors.Is(err, recipe.ErrNodeGone):
		return "node_deleted"
	case errors.Is(err, runner.ErrNoContact):
		return "no_contact"
	case errors.Is(err, zk.ErrSessionExpired):
		return "session_expired"
	case zkconn.IsSessionLoss(err):
		return "session_lost"
	}
	return "other"
}
