// Package startup sets what a zklock process must set before anything else
// runs in it; zklock's main package imports it for that alone. Package
// initialisation runs each package's init in dependency order, so this
// package, which imports next to nothing, runs early, before the heavy
// packages of the command line and of the Kerberos stack have allocated.
package startup

import (
	"runtime"
	"syscall"
)

func init() {
	// One P, unless the user set GOMAXPROCS. zklock spends its life
	// waiting (for ZooKeeper, for a watch, for the command) and its
	// goroutines mostly pass work to each other: go-zookeeper's receive
	// loop hands a watch event to the waiting goroutine, which hands a
	// request to the send loop. With one P each of those hand-offs is a
	// switch on the running thread; with more, the runtime wakes another
	// thread for it, and on a busy machine that wake-up costs more than the
	// work (on the 2-core benchmark machine it cut the handoff to the next
	// holder by about a fifth). Blocking system calls (wait4, reads) give up
	// the P, so nothing is starved. Set here rather than in main: every
	// goroutine that ran on a second P would have left a cache of
	// half-used heap spans behind, a few hundred KiB that a process
	// waiting in a queue keeps for as long as it waits.
	if _, set := syscall.Getenv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
	// No heap profile is ever taken: sampling would cost a table of 1.4 MB
	// of address space and a stack walk every 512 KiB allocated.
	runtime.MemProfileRate = 0
}
