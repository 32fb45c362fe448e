package cmd

import (
	"os"
	"runtime"
)

// oneThread runs zklock's Go code on one thread at a time, unless the user
// set GOMAXPROCS. zklock spends its life waiting (for ZooKeeper, for a watch,
// for the command) and its goroutines mostly pass work to each other:
// go-zookeeper's receive loop hands a watch event to the waiting goroutine,
// which hands a request to the send loop. With one P each of those hand-offs
// is a switch on the running thread; with more, the runtime wakes another
// thread for it, and on a busy machine that wake-up costs more than the work.
// On the 2-core benchmark machine this cut the handoff to the next holder by
// about a fifth (docs/benchmarks.md). Blocking system calls (wait4, reads)
// give up the P, so nothing is starved.
func oneThread() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
}
