//go:build linux

package main

import (
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestGroupLeader: this process's id is a process's, and the id of one of
// its other threads is not, though /proc answers for both with the same
// command line (see procs.leftover).
func TestGroupLeader(t *testing.T) {
	if !groupLeader(os.Getpid()) {
		t.Errorf("groupLeader(%d), this process: false", os.Getpid())
	}
	tids := make(chan int)
	release := make(chan struct{})
	for range 4 {
		go func() {
			runtime.LockOSThread() // the thread ends with the goroutine
			tids <- syscall.Gettid()
			<-release
		}()
	}
	defer close(release)
	others := 0
	for range 4 {
		tid := <-tids
		if tid == os.Getpid() {
			continue
		}
		others++
		if groupLeader(tid) {
			t.Errorf("groupLeader(%d), a thread of process %d: true", tid, os.Getpid())
		}
	}
	if others == 0 {
		t.Fatal("every goroutine ran on the main thread: nothing was tested")
	}
}
