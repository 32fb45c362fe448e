package runner

// Variable is one environment variable that the command gets, and what it
// holds.
type Variable struct {
	Name    string // one name, or several that go together, separated by ", "
	Meaning string // Markdown: `code` spans and [links](page.md)
}

// CommandVariables documents what environment tells the command: zklock
// run --help and the table in docs/guide/run.md are rendered from it, and a
// test keeps it equal to what environment sets.
var CommandVariables = []Variable{
	{"ZKLOCK_PATH", "the lock path (with several `--path`s, the first in sorted order)"},
	{"ZKLOCK_NODE", "zklock's own node, e.g. `/locks/job/_c_<uuid>-lock-0000000012`"},
	{"ZKLOCK_SESSION_ID", "the ZooKeeper session that holds the lock, in hex"},
	{"ZKLOCK_FENCING_TOKEN", "the node's creation zxid. It grows strictly from each holder of a path to the next."},
	{"ZKLOCK_PATHS, ZKLOCK_NODES, ZKLOCK_FENCING_TOKENS", "the same for every lock held, space-separated, in sorted path order"},
	{EnvHeld, "every lock held for this command, its ancestors' included: what a zklock started below reads to re-enter (see [re-entrancy](reentrancy.md))"},
	{"ZKLOCK_PID", "the zklock process that runs the command, its parent"},
	{EnvResources, "with `--resources`: the pool members held, comma-separated, sorted; the locks are then the members' paths, `PATH/MEMBER` (see [pools](ci.md#pools-of-named-environments))"},
}
