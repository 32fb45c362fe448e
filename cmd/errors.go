package cmd

import (
	"errors"
	"fmt"

	"github.com/zklock/zklock/internal/config"
	"github.com/zklock/zklock/internal/doctor"
	"github.com/zklock/zklock/internal/files"
	"github.com/zklock/zklock/internal/inspect"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
	"github.com/zklock/zklock/zkconn/sasl"
)

// UsageError is a mistake on the command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// asConflict gives revoke's and forget's conflicts (inspect.IsConflict)
// the exit code the user chose for them.
func asConflict(err error, code int) error {
	if inspect.IsConflict(err) {
		return &runner.ConflictError{Err: err, Code: code}
	}
	return err
}

// exitCode is the one place that turns an outcome into an exit code.
func exitCode(err error) int {
	var (
		usage    *UsageError
		conflict *runner.ConflictError
		sig      *runner.SignalError
		exit     *lockexec.ExitError
		start    *lockexec.StartError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, lockexec.ErrLockLost), errors.Is(err, lockexec.ErrLockRevoked), errors.Is(err, recipe.ErrRevoked):
		return ExitLockLost
	case errors.Is(err, lockexec.ErrMaxRuntime):
		return ExitMaxRuntime
	case errors.As(err, &exit):
		return exit.Code
	case errors.As(err, &start):
		return start.Code
	case errors.As(err, &usage), errors.Is(err, zkconn.ErrBadPath),
		errors.Is(err, zkconn.ErrBadConnString), errors.Is(err, zkconn.ErrBadAuth),
		errors.Is(err, zkconn.ErrEphemeralParent), errors.Is(err, recipe.ErrFlavorConflict),
		errors.Is(err, recipe.ErrLimitMismatch), errors.Is(err, zkconn.ErrUnprotectedParent),
		errors.As(err, new(*recipe.KindConflictError)), errors.Is(err, sasl.ErrBadJAAS),
		errors.Is(err, sasl.ErrBadKrb5Conf),
		errors.As(err, new(*runner.UpgradeError)), errors.As(err, new(*runner.OnceHeldError)),
		errors.As(err, new(*runner.SelfWaitError)), errors.Is(err, files.ErrRefused),
		errors.As(err, new(*runner.EnvTooLargeError)):
		return ExitUsage
	case errors.As(err, &conflict):
		return conflict.Code
	case errors.As(err, &sig):
		return 128 + int(sig.Signal)
	case zkconn.IsPermission(err):
		return ExitPermission
	}
	// ZooKeeper unreachable, the session lost while waiting, or any other
	// failure before the command started.
	return ExitUnavailable
}

// message is the one line printed for err, or "" when the outcome speaks for
// itself (the command's own exit status). help is where a usage error is
// explained ("zklock run --help").
func message(err error, help string) string {
	var (
		exit     *lockexec.ExitError
		usage    *UsageError
		kind     *recipe.KindConflictError
		flavor   *recipe.FlavorConflictError
		limit    *recipe.LimitMismatchError
		busy     *recipe.BusyError
		timeout  *runner.WaitTimeoutError
		revoke   *inspect.RevokeTimeoutError
		revoked  *recipe.RevokedError
		saslErr  *zkconn.SASLError
		krbConf  *sasl.Krb5ConfError
		tlsErr   *zkconn.TLSError
		recent   *runner.RecentSuccessError
		held     *runner.OnceHeldError
		unkept   *runner.UnkeptSessionError
		short    *doctor.TimeoutError
		tooLarge *runner.EnvTooLargeError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &kind):
		return err.Error() + kindHint(kind)
	case errors.As(err, &flavor) && flavor.Flavor != "":
		return err.Error() + "; use --flavor " + string(flavor.Flavor)
	case errors.As(err, &limit):
		return fmt.Sprintf("%v: %s is held with --limit %d by %s; this run asked for --limit %d",
			recipe.ErrLimitMismatch, limit.Path, limit.Held, view.Who(limit.Holder, owner.Decode(limit.Data)), limit.Want)
	case errors.As(err, &busy):
		return view.Busy(busy)
	case errors.As(err, &recent) && recent.Doubt != nil:
		// Skipped because the clocks disagree: not what --once-per
		// asked for, so said even with -E.
		return err.Error() + " (zklock forget --path " + recent.Last.Path + " lets the next run go ahead)"
	case errors.As(err, &recent):
		// Not running is what --once-per asked for; -v said why.
		return ""
	case errors.As(err, new(*runner.UpgradeError)):
		return err.Error() + " (take it exclusive in the outer zklock, or add --shared here)"
	case errors.As(err, &held):
		return err.Error() + " (give " + held.Flag() + " to the outer zklock)"
	case errors.As(err, &tooLarge) && tooLarge.Members > 0:
		return err.Error() + "; nothing was locked (use a smaller --take, or shorter member names)"
	case errors.As(err, &tooLarge):
		return err.Error() + "; nothing was locked (use fewer --path's, shorter paths, or a lock of their own for the job's parts)"
	case errors.As(err, new(*runner.SelfWaitError)):
		return err.Error() + "; its " + runner.EnvHeld + " did not reach this zklock: pass it on (sudo --preserve-env=" +
			runner.EnvHeld + ",ZKLOCK_PID; env -i " + runner.EnvHeld + "=\"$" + runner.EnvHeld + "\" ZKLOCK_PID=$ZKLOCK_PID …)"
	case errors.As(err, &timeout):
		if held := view.HeldBy(timeout.Waiting, timeout.Holders); held != "" {
			return err.Error() + " (" + held + ")"
		}
		return err.Error()
	case errors.As(err, &revoke):
		if held := view.HeldBy(revoke.Path, revoke.Holding); held != "" {
			return err.Error() + " (" + held + "; it may run with --on-revoke ignore)"
		}
		return err.Error()
	case errors.As(err, &revoked) && !errors.Is(err, lockexec.ErrLockRevoked):
		return err.Error() + "; left the queue without running the command"
	case errors.Is(err, lockexec.ErrMaxRuntime):
		return err.Error() + " (--max-runtime)"
	case errors.As(err, &exit) && !errors.Is(err, lockexec.ErrLockLost) && !errors.Is(err, lockexec.ErrMaxRuntime) && !errors.Is(err, lockexec.ErrLockRevoked):
		return ""
	case errors.As(err, new(*config.Error)):
		return err.Error() + " (see zklock config --help)"
	case errors.As(err, &usage):
		return err.Error() + " (see " + help + ")"
	case errors.As(err, &krbConf):
		// The file and the line say it all; which login read it does not
		// matter.
		return krbConf.Error()
	case errors.Is(err, sasl.ErrNoKDC):
		return err.Error() + " (check the realm's kdc in KRB5_CONFIG or /etc/krb5.conf)"
	case errors.As(err, &saslErr):
		return err.Error() + " (check --jaas or the --sasl flags)"
	case errors.As(err, &tlsErr):
		return err.Error() + tlsHints[tlsErr.Problem]
	case errors.As(err, &short):
		return err.Error() + " (" + timeoutFix(short.Timeout, short.Asked, short.Safe) + ")"
	case errors.As(err, &unkept):
		return fmt.Sprintf("%v (the servers answer, but too slowly for this session timeout: try --session-timeout %s or more)", err, unkept.Safe)
	case errors.Is(err, zkconn.ErrUnavailable):
		return err.Error() + " (check --servers, ZKLOCK_SERVERS or servers in the config file)"
	case zkconn.IsPermission(err):
		return err.Error() + " (check --auth-file, --auth, ZKLOCK_AUTH, --jaas or --sasl, and the ACL)"
	}
	return err.Error()
}

// tlsHints say which setting to check for each way a TLS handshake fails.
var tlsHints = map[zkconn.TLSProblem]string{
	zkconn.TLSOther:         " (check --tls-ca, --tls-cert and --tls-key)",
	zkconn.TLSUntrusted:     " (check --tls-ca: the CA that signed the servers' certificates)",
	zkconn.TLSNameMismatch:  " (the server's certificate must name the host as --servers writes it)",
	zkconn.TLSClientRefused: " (check --tls-cert and --tls-key: the server wants a client certificate it trusts)",
	zkconn.TLSNotTLS:        " (is this the servers' secureClientPort? without TLS, drop --tls and the --tls-* settings)",
}

// kindHint says which flags join a path of the other recipe.
func kindHint(e *recipe.KindConflictError) string {
	switch {
	case e.Found == recipe.RecipeSemaphore && e.Limit > 0:
		return fmt.Sprintf(" (use --limit %d to join it, or another --path)", e.Limit)
	case e.Found == recipe.RecipeSemaphore:
		return " (use --limit N to join it, or another --path)"
	case e.Found == recipe.RecipeSupersede:
		return " (add --supersede to join it, or use another --path)"
	case e.Want == recipe.RecipeSupersede:
		return " (drop --supersede or --cancel-in-progress to join it, or use another --path)"
	}
	return " (drop --limit to join it, or use another --path)"
}
