package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/lockexec"
)

// runOptions are run's and tryrun's flags.
type runOptions struct {
	Global       *globalOptions
	Paths        []string
	Shared       bool
	Limit        limitValue // 0: not a semaphore
	Flavor       flavorValue
	Wait         waitlimit.Limit // tryrun: NoWait; run: from --timeout
	ConflictCode int
	OnLost       onLostValue
	OnRevoke     onLostValue // the same policies: terminate or ignore
	KillGrace    time.Duration
	MaxRuntime   time.Duration
	OncePer      oncePerValue  // 0: run every time
	Supersede    bool          // a superseding queue (recipe.Supersede)
	OrderKey     orderKeyValue // unset: arrival order
	Cancel       bool          // --cancel-in-progress: supersede, and revoke the holder
	Progress     bool          // plain progress lines on stderr when it is not a terminal
	MetricsFile  metricsFileValue
	NotifyReady  bool
	Resources    resourcesValue // a pool's members; empty: the path is the lock
	Take         limitValue     // how many members; 0: not given (one)
	Argv         []string
}

// runLong is zklock run --help's text (see lazyLong): what run does, in a
// few lines, so that the usage comes next; the rest is in the help topics.
func runLong() string {
	return `Join the queue for the lock at --path, run CMD once the lock is held, and
release it when CMD exits. zklock exits with CMD's exit code; CMD is looked
up before zklock connects (127 if not found, 126 if not executable). If the
lock could be lost while CMD runs, zklock stops CMD's whole process group
first and exits 76.`
}

func newCmdRun(g *globalOptions, u *ui, runF func(context.Context, *runOptions) error) *cobra.Command {
	o := &runOptions{Global: g, Wait: waitlimit.Forever}
	c := &cobra.Command{
		Use:   "run --path PATH [flags] -- CMD [ARGS...]",
		Short: "Wait for the lock, run the command, release the lock",
		Example: `  zklock run --path /locks/nightly-report -- ./report.sh --full
  zklock run --path /locks/deploy --timeout 5m -- make deploy
  zklock run --shared --path /locks/db -- ./read-only-report.sh
  zklock run --limit 3 --path /locks/encoders -- ./encode.sh
  zklock run --path /locks/db --path /locks/cache -- ./migrate.sh
  zklock run --path /pools/staging --resources env-a,env-b,env-c -- ./deploy.sh
  zklock run --once-per 20h --timeout 1h --path /locks/report -- ./report.sh
  zklock run --flavor kazoo --path /app/lock -- ./task.sh   # shares a Kazoo Lock`,
	}
	o.bind(c, u, runF)
	c.Flags().BoolVar(&o.Progress, "progress", false, "without a terminal, print a line when the wait begins and whenever the position or the holder changes (env "+envProgress+"=1); a terminal always shows a status line")
	c.Flags().Var((*timeoutValue)(&o.Wait), "timeout", "give up waiting after this long (exit 75), counted from joining the queue; a free lock is taken whatever the timeout; 0 means do not wait at all; default: wait forever")
	return c
}

// tryrunLong is zklock tryrun --help's text (see lazyLong).
func tryrunLong() string {
	return `Run CMD under the lock at --path only if the lock is free right now.
Otherwise exit 75 at once (or --conflict-exit-code) and say on stderr who
holds the lock. Like flock -n. Everything else is as for zklock run.`
}

func newCmdTryrun(g *globalOptions, u *ui, runF func(context.Context, *runOptions) error) *cobra.Command {
	o := &runOptions{Global: g, Wait: waitlimit.None}
	c := &cobra.Command{
		Use:   "tryrun --path PATH [flags] -- CMD [ARGS...]",
		Short: "Run the command only if the lock is free now",
		Example: `  zklock tryrun --path /locks/cleanup -- ./cleanup.sh || echo "skipped: already running"
  zklock tryrun --once-per 20h --path /locks/report -- ./report.sh || [ $? -eq 75 ]`,
	}
	o.bind(c, u, runF)
	// tryrun never waits, so it has no --timeout to name.
	c.Flags().Lookup("conflict-exit-code").Usage = "exit code instead of 75 when the lock is busy or --once-per skips CMD (like flock -E)"
	return c
}

// bind adds the flags that run and tryrun share, and their argument rules.
func (o *runOptions) bind(c *cobra.Command, u *ui, runF func(context.Context, *runOptions) error) {
	o.Flavor = flavorValue(recipe.FlavorCurator)
	o.OnLost = onLostValue(lockexec.Terminate)
	o.OnRevoke = onLostValue(lockexec.Terminate)
	f := c.Flags()
	f.StringArrayVar(&o.Paths, "path", nil, "lock `PATH`, e.g. /locks/job (required); repeat to hold several locks at once")
	f.BoolVar(&o.Shared, "shared", false, "take a shared (read) lock: shared holders run together, exclusive ones alone")
	f.Var(&o.Limit, "limit", "semaphore: allow up to N (1 to 2147483647) holders at once (Curator InterProcessSemaphoreV2 layout; --flavor curator only)")
	f.Var(&o.Flavor, "flavor", "node naming: curator (InterProcessMutex), curator-rw (InterProcessReadWriteLock) or kazoo")
	o.ConflictCode = ExitBusy
	f.VarP((*exitCodeValue)(&o.ConflictCode), "conflict-exit-code", "E", "exit code instead of 75 when the lock is busy, --timeout expires, --once-per skips CMD or --supersede gives the place to a newer run (like flock -E)")
	f.Var(&o.OnLost, "on-lost", "if the lock is lost while CMD runs: terminate (stop CMD, exit 76) or ignore (warn only)")
	f.Var(&o.OnRevoke, "on-revoke", "if the lock is revoked (zklock revoke, a Curator Revoker) while CMD runs: terminate (stop CMD, release, exit 76) or ignore (warn, let CMD finish)")
	o.KillGrace = lockexec.DefaultKillGrace
	f.Var((*durationValue)(&o.KillGrace), "kill-grace", "time between SIGTERM and SIGKILL when zklock stops CMD; 0 sends SIGKILL right after SIGTERM (for a lost lock at most 1/5 of the session timeout less 100ms, and none once the lock is gone)")
	f.Var((*durationValue)(&o.MaxRuntime), "max-runtime", "stop CMD (whole process group) after this long and exit 124; 0 means no limit")
	f.Var(&o.MetricsFile, "metrics-file", "after the run, record it in this file for node_exporter's textfile collector: a NAME.prom in its --collector.textfile.directory (see docs/guide/metrics.md) (env "+envMetricsFile+")")
	f.BoolVar(&o.NotifyReady, "notify-ready", false, "under systemd (NOTIFY_SOCKET set), send READY=1 once the command has started, for a command that does not send it itself (see docs/guide/systemd.md)")
	f.BoolVar(&o.Supersede, "supersede", false, "deploy-queue mode: at most one waiter; a newer contender (or one with a higher --order-key) makes the waiter leave with exit 75 (or -E), the holder runs on; every contender of the path must pass it")
	f.BoolVar(&o.Cancel, "cancel-in-progress", false, "--supersede, and also stop the holder as zklock revoke does (it gets its --kill-grace and exits 76), then run; every contender of the path must pass --supersede or this")
	f.Var(&o.OrderKey, "order-key", "this run's integer key (pipeline or build number): it runs only if no run with a higher key has succeeded under the lock (else exit 75, or -E), and its success records it; with --supersede the waiter with the highest key survives, not the newest")
	f.Var(&o.Resources, "resources", "pool mode: the members of the pool at --path (node names, comma-separated); run CMD once one of them (--take N of them) is free, named in ZKLOCK_RESOURCES; FIFO over the whole pool")
	f.Var(&o.Take, "take", "with --resources: how many members to hold at once (default 1)")
	f.Var(&o.OncePer, "once-per", "run CMD only if it has not succeeded under the lock within this window (server time); otherwise exit 75 (or -E) without running it; only exit 0 counts")
	c.Args = commandArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		o.Argv = args
		if runF != nil {
			return runF(c.Context(), o)
		}
		u.run = newRunReport(u)
		ro, err := o.validate(u)
		if err != nil {
			return err
		}
		u.run.attach(&ro, o)
		return runner.Run(c.Context(), ro)
	}
}

// commandArgs requires the command, after --.
func commandArgs(c *cobra.Command, args []string) error {
	dash := c.ArgsLenAtDash()
	switch {
	case dash < 0 && len(args) > 0:
		return usageErrorf("missing -- before the command: zklock %s --path P -- %s", c.Name(), strings.Join(args, " "))
	case dash > 0:
		return usageErrorf("unexpected argument %q before --", args[0])
	case len(args) == 0:
		return usageErrorf("missing command: zklock %s --path P -- CMD [ARGS...]", c.Name())
	}
	return nil
}

// validatePaths checks the --path values of a command that takes several:
// at least one, each a lock path, none twice.
func validatePaths(paths []string) error {
	if len(paths) == 0 {
		return usageErrorf("--path is required")
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if err := validateLockPath(p); err != nil {
			return err
		}
		if seen[p] {
			return usageErrorf("--path %s is given twice", p)
		}
		seen[p] = true
	}
	return nil
}

// validateLockPath checks one lock path: one the recipes take, and not
// below a success record (see success.CheckPath).
func validateLockPath(p string) error {
	if err := recipe.ValidatePath(p); err != nil {
		return &UsageError{Err: err}
	}
	if err := success.CheckPath(p); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}

// validate turns the flags into runner options.
func (o *runOptions) validate(u *ui) (runner.Options, error) {
	var ro runner.Options
	if err := validatePaths(o.Paths); err != nil {
		return ro, err
	}
	flavor := recipe.Flavor(o.Flavor)
	supersede := o.Supersede || o.Cancel // cancelling the holder supersedes the waiters too
	switch {
	case o.Limit > 0 && o.Shared:
		return ro, usageErrorf("--limit and --shared do not combine: a semaphore's holders are all alike")
	case o.OncePer > 0 && (o.Shared || o.Limit > 0):
		// Holders of a read lock or a semaphore run together: each would
		// find the window open and run.
		return ro, usageErrorf("--once-per needs an exclusive lock: holders of a shared lock or a semaphore run together, so each would run; drop --shared and --limit")
	case o.Cancel && (o.Shared || o.Limit > 0):
		return ro, usageErrorf("--cancel-in-progress needs an exclusive lock: drop --shared and --limit")
	case o.Cancel && o.Wait == waitlimit.None:
		return ro, usageErrorf("--cancel-in-progress waits for the holder it stops, and this run never waits; use zklock run")
	case o.Supersede && (o.Shared || o.Limit > 0):
		return ro, usageErrorf("--supersede needs an exclusive lock: drop --shared and --limit")
	case o.Supersede && o.Wait == waitlimit.None:
		return ro, usageErrorf("--supersede gives a waiter's place to a newer run, and this run never waits; drop --supersede, or use zklock run")
	case o.OrderKey.key != nil && (o.Shared || o.Limit > 0):
		// Holders of a read lock or a semaphore run together: an older
		// one would start beside a newer one.
		return ro, usageErrorf("--order-key needs an exclusive lock: holders of a shared lock or a semaphore run together; drop --shared and --limit")
	case o.Limit > 0 && flavor == recipe.FlavorKazoo:
		return ro, usageErrorf("--limit uses Curator's semaphore layout, which Kazoo's Semaphore cannot see; %s", o.Global.dropFlavor(flavor))
	case o.Limit > 0 && flavor == recipe.FlavorCuratorRW:
		// A semaphore has one layout, InterProcessSemaphoreV2's; no
		// read-write naming applies to it, and a Curator read-write lock
		// never sees its leases.
		return ro, usageErrorf("--limit uses Curator's semaphore layout, which has no read-write naming; %s", o.Global.dropFlavor(flavor))
	}
	pool, err := o.pool()
	if err != nil {
		return ro, err
	}
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return ro, err
	}
	mode := recipe.ModeExclusive
	switch {
	case o.Limit > 0:
		mode = recipe.ModeLimit(int(o.Limit))
	case o.Shared:
		mode = recipe.ModeShared
	}
	ro = runner.Options{
		Conn: conn, Paths: o.Paths, Argv: o.Argv,
		Mode: mode, Flavor: flavor, Wait: o.Wait, ConflictCode: o.ConflictCode,
		Version: Version(), OnLost: lockexec.Policy(o.OnLost), OnRevoke: lockexec.Policy(o.OnRevoke), KillGrace: o.KillGrace, MaxRuntime: o.MaxRuntime,
		OncePer: time.Duration(o.OncePer), OrderKey: o.OrderKey.key,
		Logf: u.progress(), Warnf: u.warnf,
		Pool: pool,
	}
	if supersede {
		ro.Supersede = &recipe.Supersede{Cancel: o.Cancel} // its key is OrderKey
	}
	return ro, nil
}

// dropFlavor is the hint for a flavor that --limit rules out: drop the
// flag, or, for a flavor a file or the environment set, override it.
func (g *globalOptions) dropFlavor(f recipe.Flavor) string {
	if g.settings != nil {
		for _, row := range g.settings.rows {
			if row.s.flag == "flavor" && row.origin.rank != fromFlag {
				return fmt.Sprintf("the flavor %s comes from %s: give --flavor %s", f, row.origin.where, recipe.FlavorCurator)
			}
		}
	}
	return "drop --flavor " + string(f)
}
