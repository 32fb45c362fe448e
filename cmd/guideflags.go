package cmd

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A guideTable is a guide's table of one command's flags. The flags'
// names, shorthands, value names and defaults are cobra's, read from the
// command tree, so the guide cannot name a flag that is gone or spell one
// as no shell takes it; the meaning is the guide's own, longer than a line
// of --help can be. TestDocTables renders it into the guide, and
// TestGuideFlagsComplete holds it against the command's flags.
type guideTable struct {
	// guide is the page under docs/guide that holds the table.
	guide string
	// command is the command whose flags the table describes.
	command string
	// defaults adds a column of each flag's default.
	defaults bool
	// inherited are the global flags the table describes too.
	inherited []string
	rows      []guideRow
}

// A guideRow describes one flag, or a few that go together.
type guideRow struct {
	flags   []string
	meaning string
}

var guideTables = []guideTable{
	{guide: "run.md", command: "run", defaults: true, inherited: []string{"log-format"}, rows: []guideRow{
		{[]string{"path"}, "the lock path (required). The lock is the node `PATH`, and the contenders are its children. Repeat it to hold several locks at once (see [below](#several-locks-at-once)). A path with a component named as a contender (a node that `list` shows, such as `_c_…-lock-0000000012`) is refused with exit 64: created as a lock path, that node would hold its parent's queue."},
		{[]string{"shared"}, "take a shared (read) lock: shared holders run together, and an exclusive holder runs alone. The queue stays FIFO, so a waiting writer is not overtaken by later readers."},
		{[]string{"limit"}, "a semaphore: at most `N` holders at once (1 ≤ `N` ≤ 2147483647, Curator's lease count being a Java `int`). It always has Curator's `InterProcessSemaphoreV2` layout, so it takes no `--flavor` but `curator`: with `curator-rw` or `kazoo` (on the command line or from a [configuration file](configuration.md)) it exits 64. Every holder of a path must use the same `N`; zklock refuses a different one (exit 64) when it can see the mismatch. A path is one kind of lock: a semaphore refuses a path that holds plain or shared lock contenders, and they refuse a path that holds a semaphore (exit 64, with the flag that would join it). Each side checks after creating its own node, so of two arriving together the later one always sees the earlier and backs out."},
		{[]string{"resources"}, "pool mode: `--path` is a pool whose members are the named nodes below it, each an ordinary lock at `PATH/MEMBER`. The command runs once it holds one free member (`--take`: N of them), named in `ZKLOCK_RESOURCES`. First come, first served over the whole pool. Member names are node names (no `/`, not empty, `.`, `..`, `_queue`, `leases`, `locks` or `zklock.last-success`, not in a Curator or Kazoo lock node's shape, none twice; one `--resources` lists them all); with `--shared`, `--limit`, `--supersede`, `--once-per` or a second `--path` it exits 64. See [pools](ci.md#pools-of-named-environments)."},
		{[]string{"take"}, "with `--resources`: how many members to hold at once (1 when not given; more than the members listed exits 64)"},
		{[]string{"flavor"}, "node naming: `curator` (default), `curator-rw` or `kazoo`. See [Interop](interop.md)."},
		{[]string{"timeout"}, "give up waiting after this long (e.g. `30s`, `5m`) and exit 75. The clock starts when zklock joins the queue, not before it connects, and a lock that is free when zklock looks is taken whatever the timeout. One clock covers every path and every rejoin after a lost place. `--timeout 0` does not wait at all, like `flock -w 0`. The default is to wait forever."},
		{[]string{"progress"}, "without a terminal, print one line on stderr when the wait begins and one whenever the position or the holder changes (for CI logs; also `ZKLOCK_PROGRESS=1`). See [While it waits](#while-it-waits)."},
		{[]string{"conflict-exit-code"}, "exit `CODE` instead of 75 when the lock is busy, the wait times out, `--once-per` skips the command, `--supersede` gives the place to a newer run or `--order-key` is outdated, like `flock -E`"},
		{[]string{"max-runtime"}, "stop the command (its whole process group: SIGTERM, then SIGKILL after `--kill-grace`) once it has run for this long, and exit 124"},
		{[]string{"kill-grace"}, "time between SIGTERM and SIGKILL whenever zklock stops the command (`0` sends SIGKILL right after SIGTERM; for a lost lock at most a fifth of the session timeout, and none once the lock is gone: its node deleted, its session expired or unknown to the ensemble; see [when the lock is lost](lock-loss.md))"},
		{[]string{"on-lost"}, "what to do if the lock is lost while the command runs: `terminate` stops it and exits 76 (the default), `ignore` only warns (for idempotent jobs)"},
		{[]string{"on-revoke"}, "what to do if the lock is revoked (`zklock revoke`, a Curator `Revoker`) while the command runs: `terminate` stops it with the full `--kill-grace`, releases, and exits 76 (the default); `ignore` warns and lets it finish, with `list` showing the revocation as pending (for commands that must never be interrupted). See [revoke](revoke.md)."},
		{[]string{"metrics-file"}, "after the run, record it in `FILE` (a `NAME.prom` in node_exporter's textfile directory): its outcome, exit code, wait, hold and last success. See [metrics](metrics.md). Also `ZKLOCK_METRICS_FILE`."},
		{[]string{"notify-ready"}, "under systemd (`NOTIFY_SOCKET` set), send `READY=1` once the command has started, for a daemon that does not send it itself. See [systemd](systemd.md)."},
		{[]string{"log-format"}, "`json` writes zklock's own lines on stderr as JSON objects, one a line, with the events of the run (waiting, acquired, started, released, exit, …): see [structured events](events.md). A flag of every command; also `ZKLOCK_LOG_FORMAT`."},
		{[]string{"supersede"}, "deploy-queue mode: at most one waiter per lock path. A run that joins behind a waiter makes it leave the queue: the older one exits 75 (or `-E`), outcome `superseded`, naming the newer one (host, pid, order key). The holder is never disturbed, and the waiter that is next when the holder releases always runs, however many newer runs keep arriving. Every contender of the path must pass it: a plain run on a superseding queue, or a superseding run on a plain one, exits 64. Exclusive locks that wait only: with `--shared`, `--limit` or `tryrun` it exits 64. See [CI/CD deploy queues](ci.md)."},
		{[]string{"cancel-in-progress"}, "`--supersede`, and also stop the holder as `zklock revoke` does: it gets its `--kill-grace`, its command's process group is stopped, and it exits 76 (outcome `revoked`); then this run's command starts. See [CI/CD deploy queues](ci.md#cancel-in-progress)."},
		{[]string{"order-key"}, "this run's integer key (`$CI_PIPELINE_IID`, `$GITHUB_RUN_NUMBER`, `$BUILD_NUMBER`, a commit's timestamp). A success records it; a run whose key is below the recorded one exits 75 (or `-E`) without running, outcome `outdated`; an equal key (a retry) runs. With `--supersede` the waiter with the highest key survives rather than the newest. A non-integer, `--shared` or `--limit` exits 64. See [CI/CD deploy queues](ci.md#outdated-runs)."},
		{[]string{"once-per"}, "run the command only if it has not succeeded under the lock within this window (e.g. `20h`), on the server's clock; otherwise exit 75 (or `-E`) without running it. Exclusive locks only: with `--shared` or `--limit`, whose holders run together, it exits 64. See [At most once per window](once-per.md)."},
	}},
	{guide: "revoke.md", command: "revoke", defaults: true, rows: []guideRow{
		{[]string{"path"}, "the lock path (required)"},
		{[]string{"node"}, "revoke only this contender, holder or waiter"},
		{[]string{"wait"}, "wait until the revoked contenders have released the lock, then print `released PATH`"},
		{[]string{"timeout"}, "with `--wait` (which it implies), give up after this long and exit 75, naming who still holds it"},
		{[]string{"conflict-exit-code"}, "exit `CODE` instead of 75 when `--timeout` expires"},
	}},
	{guide: "metrics.md", command: "exporter", defaults: true, rows: []guideRow{
		{[]string{"path"}, "the node below which every lock is exported"},
		{[]string{"listen"}, "host and port to serve on; `:9713` for every address"},
		{[]string{"max-paths"}, "export at most this many lock paths, the first in sorted order"},
	}},
}

// flag finds a flag of c as the guide names it: its own, or one of
// the global flags t describes.
func (t guideTable) flag(c *cobra.Command, name string) *pflag.Flag {
	if f := c.LocalFlags().Lookup(name); f != nil {
		return f
	}
	for _, n := range t.inherited {
		if n == name {
			return c.InheritedFlags().Lookup(name)
		}
	}
	return nil
}

// markdown renders the table for c, the command it names; a flag it names
// that c lacks is left out, for TestGuideFlagsComplete to report.
func (t guideTable) markdown(c *cobra.Command) string {
	var b strings.Builder
	if t.defaults {
		b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	} else {
		b.WriteString("| flag | meaning |\n|---|---|\n")
	}
	for _, r := range t.rows {
		var names, defs []string
		for _, n := range r.flags {
			f := t.flag(c, n)
			if f == nil {
				continue
			}
			names = append(names, flagCell(f)...)
			if !zeroDefaults[f.DefValue] {
				defs = append(defs, "`"+f.DefValue+"`")
			}
		}
		cells := []string{strings.Join(names, ", ")}
		if t.defaults {
			cells = append(cells, strings.Join(defs, ", "))
		}
		cells = append(cells, r.meaning)
		for i, s := range cells {
			cells[i] = strings.ReplaceAll(s, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// zeroDefaults are the defaults that mean "not set" (off, no limit, none),
// which the table leaves blank as --help leaves them out.
var zeroDefaults = map[string]bool{"": true, "false": true, "0": true, "0s": true, "[]": true}

// flagCell spells f as --help does: the shorthand, then the long name with
// the name of its value, each in code.
func flagCell(f *pflag.Flag) []string {
	var out []string
	if f.Shorthand != "" {
		out = append(out, "`-"+f.Shorthand+"`")
	}
	long := "--" + f.Name
	if v, _ := pflag.UnquoteUsage(f); v != "" {
		long += " " + v
	}
	return append(out, "`"+long+"`")
}
