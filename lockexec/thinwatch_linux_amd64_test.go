package lockexec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/zklock/zklock/internal/zktest"
)

// TestThinBlockLayout: the assembly reads the shared page by offset; the
// offsets it uses are these.
func TestThinBlockLayout(t *testing.T) {
	var b thinBlock
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"pgid", unsafe.Offsetof(b.pgid), 0},
		{"stopAt", unsafe.Offsetof(b.stopAt), 8},
		{"killAt", unsafe.Offsetof(b.killAt), 16},
		{"done", unsafe.Offsetof(b.done), 24},
		{"fired", unsafe.Offsetof(b.fired), 32},
		{"rfd", unsafe.Offsetof(b.rfd), 40},
		{"stopped", unsafe.Offsetof(b.stopped), 48},
		{"killed", unsafe.Offsetof(b.killed), 56},
		{"name", unsafe.Offsetof(b.name), 64},
		{"ts", unsafe.Offsetof(b.ts), 80},
		{"pollfd", unsafe.Offsetof(b.pollfd), 96},
		{"allMask", unsafe.Offsetof(b.allMask), 104},
		{"oldMask", unsafe.Offsetof(b.oldMask), 112},
		{"wpid", unsafe.Offsetof(b.wpid), 120},
		{"unmap", unsafe.Offsetof(b.unmap), 128},
		{"buf", unsafe.Offsetof(b.buf), 176},
		{"readyfd", unsafe.Offsetof(b.readyfd), 240},
	} {
		if f.got != f.want {
			t.Errorf("thinBlock.%s at %d, the assembly reads it at %d", f.name, f.got, f.want)
		}
	}
	if n := unsafe.Sizeof(b); n > thinPage/2 {
		t.Errorf("thinBlock is %d bytes, more than half its page", n)
	}
}

// TestThinWatchdogStandsAlone: on this platform the watchdog is the
// in-memory one, and it keeps nothing of zklock's: not its memory (a few
// pages of its own, so that the out-of-memory killer does not take it
// with zklock), not its descriptors (only the pipe: a copy of the write
// end would keep zklock's death from ending it), not its session.
func TestThinWatchdogStandsAlone(t *testing.T) {
	wd, err := StartWatchdog()
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Retire()
	if wd.thin == nil {
		t.Fatal("the watchdog is a process of its own executable, not the in-memory one")
	}
	proc := "/proc/" + strconv.Itoa(wd.pid)
	// StartWatchdog returns once the fork has; what the watchdog does
	// first (its name, the unmapping, the descriptors) follows at once.
	zktest.Eventually(t, waitTimeout, "its copy of zklock's memory and descriptors to go", func() bool {
		fds, err := os.ReadDir(proc + "/fd")
		return err == nil && len(fds) == 1 && fds[0].Name() == "0" &&
			strings.Count(readProc(t, proc+"/maps"), "\n") <= 4
	})
	if status := readProc(t, proc+"/status"); !strings.Contains(status, "Name:\tzklock-watchdog\n") {
		t.Errorf("its name is not zklock-watchdog:\n%s", status)
	}
	if rss := statusKiB(t, readProc(t, proc+"/status"), "VmRSS:"); rss > 64 {
		t.Errorf("it holds %d KiB of memory, want a few pages", rss)
	}
	stat := readProc(t, proc+"/stat")
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+2:])
	if f[3] != strconv.Itoa(wd.pid) { // session, the 6th field
		t.Errorf("it is in session %s, want its own", f[3])
	}
}

func readProc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func statusKiB(t *testing.T, status, key string) int {
	t.Helper()
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in status", key)
	return 0
}

// TestThinWatchdogDiedFallsBack: an in-memory watchdog that dies before it
// is ready (here it unmaps its own code) is not taken for one: the
// watchdog process stands in, and it works.
func TestThinWatchdogDiedFallsBack(t *testing.T) {
	thinUnmapsItsCode = true
	defer func() { thinUnmapsItsCode = false }()
	wd, err := StartWatchdog()
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Retire()
	if wd.thin != nil {
		t.Fatal("a watchdog that died as it started was taken for the in-memory one")
	}
	if status := readProc(t, "/proc/"+strconv.Itoa(wd.pid)+"/status"); strings.Contains(status, "zklock-watchdog") {
		t.Fatalf("the watchdog standing in is not the process:\n%s", status)
	}
	unrenewedWith(t, wd, treeScript, 300*time.Millisecond, 600*time.Millisecond, 300*time.Millisecond)
}

// TestThinForkerKilled: the short-lived process that forks the watchdog
// can be killed before its fork returns (a SIGKILL to zklock's group, or
// to its pids one by one). The watchdog's pid is then unknown, and a pid
// of 0 would be the worst answer: kill(0, SIGKILL) in Retire is zklock's
// own process group. A start whose forker died says so instead, and the
// watchdog process stands in for it.
func TestThinForkerKilled(t *testing.T) {
	// In a process group of its own meanwhile: a start that got it wrong
	// kills this test binary, not `go test` and the shell that ran it.
	group := syscall.Getpgrp()
	if err := syscall.Setpgid(0, 0); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Setpgid(0, group) }()
	before := map[int]bool{}
	for _, pid := range ownChildren() {
		before[pid] = true
	}
	stop := make(chan struct{})
	hunted := make(chan struct{})
	// Kills every new child of this process as soon as it shows: the
	// forkers, and the watchdogs that get that far.
	go func() {
		defer close(hunted)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, pid := range ownChildren() {
				if !before[pid] {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}()
	defer func() { close(stop); <-hunted }()
	disturbed := 0
	for deadline := time.Now().Add(waitTimeout); disturbed < 5 && time.Now().Before(deadline); {
		pid, tw, err := startThin()
		if err != nil {
			disturbed++
			continue
		}
		if pid <= 0 {
			t.Fatalf("the watchdog started as pid %d", pid)
		}
		tw.retire(pid)
	}
	if disturbed == 0 {
		t.Error("no start of the watchdog was disturbed; the test proves nothing")
	}
}

// ownChildren lists this process's children, from every thread.
func ownChildren() []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, path := range tasks {
		b, _ := os.ReadFile(path)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestThinForkLeavesNoMarks: the marks that keep zklock's mappings out of
// the watchdog's fork are all gone once it has started, above the kernel's
// vvar pages too (which refuse to lose theirs, and stop one call over the
// whole address space): a later fork that copies mappings (one into a new
// user namespace) would otherwise start a child without a stack.
func TestThinForkLeavesNoMarks(t *testing.T) {
	before := dontCopy(t)
	wd, err := StartWatchdog()
	if err != nil {
		t.Fatal(err)
	}
	wd.Retire()
	for m := range dontCopy(t) {
		if !before[m] && !strings.Contains(m, "[vvar") {
			t.Errorf("left marked do-not-copy: %s", m)
		}
	}
}

// dontCopy lists the mappings of this process that a fork would not copy
// (VmFlags dc), by their first line in smaps.
func dontCopy(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	var head string
	for _, line := range strings.Split(readProc(t, "/proc/self/smaps"), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			head = strings.Join(append([]string{f[0]}, f[5:]...), " ")
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && strings.Contains(" "+flags+" ", " dc ") {
			out[head] = true
		}
	}
	return out
}
