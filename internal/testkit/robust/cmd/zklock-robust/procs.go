//go:build linux

package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// procs tracks the zklock processes alive now (the nemesis's targets) and
// every process of the run, for the check that none is left at the end.
type procs struct {
	mu     sync.Mutex
	alive  map[int]int // zklock pid → client slot
	killed map[int]bool
	all    []int
}

func newProcs() *procs { return &procs{alive: map[int]int{}, killed: map[int]bool{}} }

func (p *procs) add(pid, slot int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alive[pid] = slot
	p.all = append(p.all, pid)
}

// remove forgets a reaped zklock and reports whether the nemesis killed it.
func (p *procs) remove(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.alive, pid)
	k := p.killed[pid]
	delete(p.killed, pid)
	return k
}

func (p *procs) seen(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.all = append(p.all, pid)
}

// pick is the n-th live zklock in pid order (n taken modulo their number),
// marked killed when kill is set, so that its run is not judged by its
// exit code.
func (p *procs) pick(n int, kill bool) (pid int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.alive) == 0 {
		return 0, false
	}
	var pids []int
	for pid := range p.alive {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	pid = pids[n%len(pids)]
	if kill {
		p.killed[pid] = true
	}
	return pid, true
}

// leftover lists the processes of the run still alive: a pid reused by
// another program since is told apart by its command line. A long run
// starts enough processes for the kernel's ids to wrap, and a thread's id
// comes from the same space: /proc/ID answers for a thread too, with its
// process's command line, so a recorded pid reused as a thread of this
// runner (or of a new run's process) would be taken for the process. The
// caller SIGKILLs what it gets: that once killed the runner itself, at
// the end of a 30-minute run. Only a process's own id (its thread group's
// leader) counts, never this runner's.
func (p *procs) leftover(self, zklock string) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, pid := range p.all {
		if pid == os.Getpid() || !groupLeader(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(b), "\x00")
		if argv0 == self || argv0 == zklock || argv0 == "/proc/self/exe" {
			out = append(out, pid)
		}
	}
	return out
}

// groupLeader reports whether id is a process's own id, not one of its
// other threads': its Tgid is itself.
func groupLeader(id int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(id) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strings.TrimSpace(v) == strconv.Itoa(id)
		}
	}
	return false
}
