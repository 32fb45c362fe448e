package cmd

import (
	"strings"
	"sync"
)

// Exit codes. sysexits(3) numbers where one fits, so that a cron wrapper or a
// CI step can tell "someone else has it" from "ZooKeeper is down" from "the
// job itself failed". Everything else is the command's own code.
const (
	ExitOK          = 0
	ExitUsage       = 64  // EX_USAGE: bad flags, paths or arguments
	ExitUnavailable = 69  // EX_UNAVAILABLE: no ZooKeeper session, or it failed before the command ran
	ExitBusy        = 75  // EX_TEMPFAIL: busy, --timeout expired, skipped, superseded or outdated
	ExitLockLost    = 76  // the lock was lost or revoked while the command ran, or a waiter was revoked
	ExitPermission  = 77  // EX_NOPERM: auth or ACL refused
	ExitMaxRuntime  = 124 // --max-runtime stopped the command (as timeout(1) does)
	ExitCannotExec  = 126 // the command exists but cannot be executed
	ExitNotFound    = 127 // the command was not found
	// 128+N: the command died of signal N, or zklock was stopped by signal N
	// while it was still waiting.
)

// exitCodes documents every exit code: the one text that --help, the man
// pages and the README's table show (TestDocTables keeps the README equal
// to it). A `code span` stays one in Markdown and is plain text in --help.
// When exitCode learns a new outcome, say here which code it gets.
var exitCodes = []reference{
	{"the command's own", "the command ran and exited with this code"},
	{"128+N", "the command died of signal N, or zklock got signal N while it was still waiting"},
	{"64", "usage error: a bad flag, path, argument or configuration file (a mistyped command, " +
		"a flock(1) option, a duration without a unit: each with a hint); an `--auth-file` that " +
		"others may read; a `--jaas` file with an unsupported login module or a missing key; a Kerberos " +
		"configuration (`KRB5_CONFIG`, /etc/krb5.conf) that cannot be parsed; a lock " +
		"path under an ephemeral node; a `--flavor` or `--limit` that the path's current holders rule " +
		"out, or a path that holds the other recipe (a semaphore for a lock, a lock for a " +
		"semaphore, a plain run for a `--supersede` queue or the reverse); `--protect` under a parent that lets everyone delete; an exclusive request " +
		"inside an ancestor's shared hold; `--once-per` or `--order-key` on a path an ancestor holds"},
	{"69", "ZooKeeper unreachable, no session within `--connect-timeout` (also for a waiter whose " +
		"session expired and that cannot open a new one, or whose sessions were lost 3 times in a row " +
		"before they could join the queue), no Kerberos KDC reachable, or the session failed before " +
		"the command started"},
	{"75", "busy (`tryrun`), `--timeout` expired, `--once-per` skipped the command (it succeeded " +
		"within the window), `--supersede` gave this waiter's place to a newer run, or `--order-key` " +
		"is below the key of the last success (outdated); for " +
		"`revoke --wait`: the holder had not released in time; for `forget`: new successes kept " +
		"being recorded while it deleted the record. Change it with `--conflict-exit-code` " +
		"(`run`, `tryrun`, `revoke`)"},
	{"76", "the lock was lost or revoked while the command ran, so the command was stopped; or a " +
		"waiting zklock was revoked and left the queue without running the command"},
	{"77", "auth or ACL refused (a wrong password, a wrong or expired Kerberos key, a ticket the " +
		"server does not accept), or the server demands authentication " +
		"(`enforce.auth.enabled`) and none was given"},
	{"124", "`--max-runtime` expired, so the command was stopped"},
	{"126", "the command is not executable (a file without the execute bit, or a directory)"},
	{"127", "the command was not found. It is looked up before zklock connects, so a typo fails at " +
		"once instead of after the wait: a name without `/` in `PATH` (with `PATH` unset, in " +
		"`/bin:/usr/bin`, as `execvp` and flock(1) do), a path such as `./script.sh` as it is"},
}

// exitCodeHelp is the exit codes as --help shows them, made on first use
// (see environmentHelp).
var exitCodeHelp = sync.OnceValue(func() string { return "Exit codes:\n" + helpList(exitCodes) })

// reference is one row of a documented list: a name (an exit code, an
// environment variable) and what it means.
type reference struct{ name, meaning string }

// Layout of a list in --help: the names indented, the meanings in a column
// of their own, wrapped to fit 80 columns.
const (
	helpIndent  = 2
	helpColumn  = 20
	helpColumns = 80
)

// helpList renders references for --help: one name per line, its meaning
// beside it (below it, for a name too long for its column), wrapped.
func helpList(refs []reference) string {
	var b strings.Builder
	pad := strings.Repeat(" ", helpColumn)
	for i, r := range refs {
		if i > 0 {
			b.WriteString("\n")
		}
		lead := strings.Repeat(" ", helpIndent) + plain(r.name)
		if len(lead) < helpColumn-1 {
			lead += strings.Repeat(" ", helpColumn-len(lead))
		} else {
			lead += "\n" + pad
		}
		b.WriteString(lead)
		b.WriteString(strings.Join(wrap(plain(r.meaning), helpColumns-helpColumn), "\n"+pad))
	}
	return b.String()
}

// plain is Markdown's inline text as --help shows it: code spans unquoted,
// links [text](target) as their text.
func plain(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, "`[")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		if s[i] == '`' {
			s = s[i+1:]
			continue
		}
		text, rest, ok := strings.Cut(s[i+1:], "](")
		_, after, closed := strings.Cut(rest, ")")
		if !ok || !closed || strings.Contains(text, "]") {
			b.WriteByte('[')
			s = s[i+1:]
			continue
		}
		b.WriteString(strings.ReplaceAll(text, "`", ""))
		s = after
	}
	return b.String()
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}

// markdownTable renders references as a Markdown table with the given
// column heads, the names as code where code says so.
func markdownTable(head [2]string, refs []reference, code bool) string {
	var b strings.Builder
	b.WriteString("| " + head[0] + " | " + head[1] + " |\n|---|---|\n")
	for _, r := range refs {
		name := r.name
		if code {
			name = "`" + strings.ReplaceAll(name, ", ", "`, `") + "`"
		}
		b.WriteString("| " + name + " | " + strings.ReplaceAll(r.meaning, "|", `\|`) + " |\n")
	}
	return b.String()
}
