package cmd

// Exit codes. sysexits(3) numbers where one fits, so that a cron wrapper or a
// CI step can tell "someone else has it" from "ZooKeeper is down" from "the
// job itself failed". Everything else is the command's own code.
const (
	ExitOK          = 0
	ExitUsage       = 64  // EX_USAGE: bad flags, paths or arguments
	ExitUnavailable = 69  // EX_UNAVAILABLE: no ZooKeeper session, or it failed before the command ran
	ExitBusy        = 75  // EX_TEMPFAIL: tryrun found the lock busy, run's --timeout expired, or --once-per skipped the command
	ExitLockLost    = 76  // the lock was lost or revoked while the command ran, or a waiter was revoked
	ExitPermission  = 77  // EX_NOPERM: auth or ACL refused
	ExitMaxRuntime  = 124 // --max-runtime stopped the command (as timeout(1) does)
	ExitCannotExec  = 126 // the command exists but cannot be executed
	ExitNotFound    = 127 // the command was not found
	// 128+N: the command died of signal N, or zklock was stopped by signal N
	// while it was still waiting.
)

// exitCodeHelp is shown in `zklock --help` and the README; keep them equal.
const exitCodeHelp = `Exit codes:
  CMD's own   the command ran and exited with this code
  128+N       the command died of signal N (or zklock got signal N while waiting)
  64          usage error: bad flag, path or arguments, or a bad configuration
              file; a --flavor or --limit that the path's current holders rule
              out, or a path that holds the other kind of lock (a semaphore,
              or a plain/shared lock); an exclusive lock inside an ancestor's
              shared hold, or --once-per on a path an ancestor holds
  69          ZooKeeper unreachable, no session within --connect-timeout, or
              no Kerberos KDC reachable
  75          busy (tryrun), --timeout expired, or --once-per: it succeeded
              within the window, so it did not run (for revoke --wait: the
              holder did not release in time; for forget: new successes kept
              being recorded); change with --conflict-exit-code
  76          the lock was lost or revoked while the command ran (the command
              was stopped), or a waiting zklock was revoked (it left the queue)
  77          auth or ACL refused (a SASL login included)
  124         --max-runtime expired (the command was stopped)
  126         command not executable
  127         command not found`
