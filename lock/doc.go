// Package lock holds zklock's ZooKeeper recipes and nothing else: no process
// handling, no flags, no output. It knows how contender nodes are named
// (zklock's own names are Curator-compatible), how they are ordered, how to
// join the queue without a herd, and how to read a queue back for display.
//
// The mutex is the ZooKeeper "Locks" recipe: each contender creates an
// ephemeral-sequential child of the lock path, and waits with an exists watch
// on the one contender just before it, so a release wakes exactly one waiter.
package lock
