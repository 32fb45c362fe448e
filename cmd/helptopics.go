package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// A command's --help starts with what to type: a few lines of what it does,
// then the usage and the flags. The reference that used to come first (the
// exit codes, the environment, the events, how the queue and a loss behave)
// lives in help topics, `zklock help NAME`, made from the same lists as the
// README's and the guides' tables, and the man pages carry it whole.

// helpTopic is one `zklock help NAME` page.
type helpTopic struct {
	name, short string
	text        func() string
}

// helpTopics are listed in this order under "Learn more".
var helpTopics = []helpTopic{
	{"queue", "How waiters queue, share, re-enter and skip a run", queueHelp},
	{"lock-loss", "What happens to CMD when the lock is lost", lockLossHelp},
	{"exit-codes", "What each exit code means", func() string { return exitCodeHelp() }},
	{"environment", "The variables zklock reads and CMD gets", func() string {
		return environmentHelp() + "\n\n" + commandEnvironmentHelp()
	}},
	{"events", "The JSON events of --log-format json", eventHelp},
}

// newCmdTopics makes the help topics: commands with no run function, which
// cobra lists as "Additional help topics" and `zklock help NAME` shows.
func newCmdTopics() []*cobra.Command {
	out := make([]*cobra.Command, len(helpTopics))
	for i, t := range helpTopics {
		out[i] = &cobra.Command{Use: t.name, Short: t.short}
	}
	return out
}

// topicLong is topic name's page, for lazyLong.
func topicLong(name string) func() string {
	for _, t := range helpTopics {
		if t.name == name {
			return t.text
		}
	}
	return nil
}

// learnMore is the block that ends the help of the commands that run a
// command under a lock. zklock --help lists the topics as cobra's
// "Additional help topics" instead.
var learnMore = map[string][]string{
	"zklock run":    {"queue", "lock-loss", "exit-codes", "environment", "events"},
	"zklock tryrun": {"queue", "lock-loss", "exit-codes", "environment"},
}

// writeLearnMore prints c's "Learn more" block, if it has one.
func writeLearnMore(w io.Writer, c *cobra.Command) {
	names := learnMore[c.CommandPath()]
	if len(names) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("\nLearn more:\n")
	for _, n := range names {
		for _, t := range helpTopics {
			if t.name == n {
				fmt.Fprintf(&b, "  %-26s %s\n", "zklock help "+n, t.short)
			}
		}
	}
	b.WriteString("  man zklock-run, and the guides in docs/guide\n")
	io.WriteString(w, b.String())
}

// fullLong is c's long help with its topics appended, for the man pages,
// which have no `zklock help NAME` to point at.
func fullLong(c *cobra.Command) string {
	long := c.Long
	for _, n := range learnMore[c.CommandPath()] {
		long += "\n\n" + topicLong(n)()
	}
	return long
}

// queueHelp is `zklock help queue`.
func queueHelp() string {
	return `How the queue works:

Waiters queue in FIFO order and each watches only the waiter ahead of it, so
a release wakes exactly one process. The lock's nodes are ephemeral: if
zklock or its host dies, the lock is released when the session expires.

--shared takes a read lock (shared holders run together, exclusive ones
alone, in FIFO order); --limit N allows N holders at once. Repeat --path to
hold several locks: they are taken in sorted order, so jobs naming the same
paths in any order never deadlock, and --timeout covers them all.

While it waits at a terminal, one status line on stderr says the position,
who holds the lock and for how long, how long zklock has waited and what is
left of --timeout; it is erased before CMD starts. Without a terminal
nothing is printed unless --progress (or ZKLOCK_PROGRESS=1) is given.

stdin, stdout and stderr pass straight through. While CMD runs, SIGINT,
SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to zklock are forwarded to
it. While zklock is still waiting, those signals make it leave the queue and
exit 128+N. CMD gets the variables of zklock help environment.

Re-entrant: a zklock started by CMD (or below it) that asks for a path this
zklock holds runs at once, without a node of its own, once the server
confirms that the node in ZKLOCK_HELD still belongs to its session. An
exclusive hold covers exclusive and shared requests, a shared hold only
shared ones (an exclusive request inside it exits 64), a lease only a
--limit of the same N. Other paths are taken as usual.

--once-per D: once the locks are held, run CMD only if it has not exited 0
under the lock (its first --path, in sorted order) within D, by the
servers' clock and by the recording host's (the younger age counts: see
docs/guide/once-per.md); otherwise exit 75 (or --conflict-exit-code) without running
it, and say with -v when and on which host it last succeeded. A failed run
leaves the window open. It needs an exclusive lock (not --shared or
--limit, whose holders run together).`
}

// lockLossHelp is `zklock help lock-loss`.
func lockLossHelp() string {
	return `When the lock is lost or revoked:

CMD runs in its own process group. If the ensemble's quorum stops
confirming the session for so long that it could expire, zklock stops that
whole group (SIGTERM, then SIGKILL) before the leader could give the lock
to the next waiter, and exits 76 (see --on-lost). A loss that has already
happened (its node deleted, its session expired or unknown to the
ensemble) gets SIGKILL at once, with no grace. A server that falls
silent is dropped for the next one of --servers, keeping the lock. If
zklock itself is killed, or stopped for too long (SIGSTOP, Ctrl-Z), its
watchdog kills CMD's group.

zklock revoke (or a Curator Revoker) asks the holder to give the lock up:
CMD's group is stopped the same way, with the full --kill-grace, the lock
released, and zklock exits 76 naming who revoked it and when; a revoked
waiter leaves the queue and exits 76. --on-revoke ignore lets CMD finish.`
}
