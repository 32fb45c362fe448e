package lockexec

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The in-memory watchdog is the dead man's switch without a program of its
// own. The watchdog process (watchdog_proc_unix.go) is zklock's executable
// started again, and its start (exec, the Go runtime, the initialisation
// of every package linked into zklock) cost more CPU than all the rest of
// an uncontended run. This one is forked from zklock without an exec and
// runs a loop of a few dozen instructions (thinwatch_linux_amd64.s) that
// make system calls only. It does what the process does: it sleeps in
// poll(2) on a pipe whose only writer is zklock, wakes at the next
// deadline, sends the command's group SIGTERM and SIGKILL at the deadlines
// zklock has not moved, and SIGKILL at once when the pipe ends before
// zklock said it was done, for the kernel closes zklock's end when zklock
// dies, even by SIGKILL.
//
// The instructions travel in a page both processes map (thinBlock) rather
// than as lines on the pipe; a byte on the pipe only wakes the watchdog to
// read them again. Being a process of its own, in a session of its own,
// it goes on running while zklock is stopped (SIGSTOP, Ctrl-Z, a
// debugger), starved or killed. It starts with every signal blocked and
// keeps them so, so no Go signal handler ever runs in it, and no Go code at
// all.
//
// Why a fork and not a clone that shares zklock's memory, which would cost
// less: the kernel's out-of-memory killer kills every process that shares
// the memory of the one it picks, and a watchdog that died with zklock
// would leave the command's grandchildren running. The fork gives up its
// copy of the address space at once, all but the shared page and the
// pages of its code, so that zklock's later writes copy nothing: its
// memory is a few pages of its own. What the fork costs zklock is the copy
// of its page tables and a fault on the first write to each page after it.
//
// zklock takes it for its watchdog only once it has said it is ready, after
// the unmapping: where the process holds something the loop needs in the
// memory it gives up (an emulator running zklock for another architecture
// keeps itself there), the watchdog dies first, and the watchdog process
// stands in.

// thinBlock is the page shared by zklock and its in-memory watchdog. The
// assembly names its fields by offset; TestThinBlockLayout checks them.
type thinBlock struct {
	pgid    int64 // the command's process group; 0 until armed
	stopAt  int64 // shared-clock nanoseconds of SIGTERM; 0 for never
	killAt  int64 // of SIGKILL; 0 for never
	done    int64 // 1 once zklock is done with the command
	fired   int64 // written by the watchdog: signals sent at deadlines
	rfd     int64 // the pipe's read end, in zklock's table
	stopped int64 // the watchdog's own: SIGTERM sent
	killed  int64 // SIGKILL sent
	name    [16]byte
	ts      [2]int64
	pollfd  unix.PollFd
	allMask uint64
	oldMask uint64
	wpid    int64         // the watchdog's pid, or -errno, once thinClone returns
	unmap   [3][2]uintptr // address ranges the watchdog unmaps (address, length)
	buf     [64]byte
	readyfd int64 // the ready pipe's write end, in zklock's table
}

const thinPage = 4096

// userTop ends x86-64's user address space with 4-level paging; with 5
// levels the kernel maps nothing above it unless asked to.
const userTop = uintptr(0x7ffffffff000)

// thinWatch is zklock's side of an in-memory watchdog.
type thinWatch struct {
	page []byte
	blk  *thinBlock
	wake int // the pipe's write end, non-blocking
}

var (
	thinOnce sync.Once
	thinOK   bool
)

// errNoThin: the kernel lacks something the in-memory watchdog needs; the
// watchdog process stands in.
var errNoThin = errors.New("no in-memory watchdog on this kernel")

// thinSupported: close_range(2) (Linux 5.9) empties the watchdog's copy of
// zklock's descriptor table. Probed with an empty range, which it refuses
// with EINVAL where it exists.
func thinSupported() bool {
	thinOnce.Do(func() {
		thinOK = unix.CloseRange(3, 2, 0) == unix.EINVAL
	})
	return thinOK
}

// thinClone starts the watchdog on the page at blk (see the assembly). It
// returns the pid of the short-lived process that forked it, which the
// caller reaps; the watchdog's pid is then in the block.
func thinClone(blk uintptr) (pid int64, errno int64)

// thinCode is where thinClone's code, the watchdog's too, starts.
func thinCode() uintptr

// thinUnmapsItsCode makes the in-memory watchdog unmap its own code, and
// so die before it is ready, as it would where something it needs lives in
// the memory it gives up; tests set it.
var thinUnmapsItsCode = false

// errThinDied: the in-memory watchdog died before it was ready.
var errThinDied = errors.New("the in-memory watchdog died as it started")

// watchdogPipe is a pipe whose two ends are above the standard three in
// zklock's table, so that the watchdog, which moves its ends onto 0 and 1
// of its copy, cannot move one onto the other.
func watchdogPipe() ([2]int, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return p, err
	}
	for i, fd := range p {
		if fd > 2 {
			continue
		}
		up, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		unix.Close(fd)
		if err != nil {
			unix.Close(p[1-i])
			return p, err
		}
		p[i] = up
	}
	return p, nil
}

// startThin starts an in-memory watchdog.
func startThin() (pid int, tw *thinWatch, err error) {
	if !thinSupported() {
		return 0, nil, errNoThin
	}
	page, err := unix.Mmap(-1, 0, thinPage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		if err != nil {
			unix.Munmap(page)
		}
	}()
	// p: the instructions' pipe; ready: the watchdog's word that it runs.
	p, err := watchdogPipe()
	if err != nil {
		return 0, nil, err
	}
	ready, err := watchdogPipe()
	if err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return 0, nil, err
	}
	defer unix.Close(ready[0])
	if err := unix.SetNonblock(p[1], true); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		unix.Close(ready[1])
		return 0, nil, err
	}
	blk := (*thinBlock)(unsafe.Pointer(&page[0]))
	blk.rfd = int64(p[0])
	blk.readyfd = int64(ready[1])
	copy(blk.name[:], "zklock-watchdog")
	blk.pollfd = unix.PollFd{Fd: 0, Events: unix.POLLIN}
	blk.allMask = ^uint64(0)
	keep := thinKeeps(uintptr(unsafe.Pointer(&page[0])), thinCode())
	blk.unmap = keepOnly(keep)
	if thinUnmapsItsCode {
		blk.unmap = [3][2]uintptr{{thinPage, userTop - thinPage}}
	}
	forker, errno := forkLight(keep, func() (int64, int64) {
		return thinClone(uintptr(unsafe.Pointer(&page[0])))
	})
	unix.Close(p[0])
	unix.Close(ready[1])
	if errno == 0 {
		reap(int(forker))
		switch {
		case blk.wpid < 0:
			errno = -blk.wpid
		case blk.wpid == 0: // the forker died before it said
			errno = int64(syscall.ECHILD)
		}
	}
	if errno != 0 {
		unix.Close(p[1])
		return 0, nil, syscall.Errno(errno)
	}
	pid = int(blk.wpid)
	// It is ready once it has given up zklock's memory and descriptors; a
	// watchdog that died on the way (only the end comes) is no watchdog.
	var b [1]byte
	n, rerr := unix.Read(ready[0], b[:])
	for rerr == unix.EINTR {
		n, rerr = unix.Read(ready[0], b[:])
	}
	if n != 1 {
		unix.Close(p[1])
		_ = syscall.Kill(pid, syscall.SIGKILL)
		reap(pid)
		return 0, nil, errThinDied
	}
	return pid, &thinWatch{page: page, blk: blk, wake: p[1]}, nil
}

// thinKeeps is what the watchdog keeps of the address space, as (start,
// end) ranges in ascending order: the page at blk, and the pages around
// code, the start of its loop.
func thinKeeps(blk, code uintptr) [2][2]uintptr {
	codeLo := code&^(thinPage-1) - thinPage
	a, b := [2]uintptr{codeLo, codeLo + 3*thinPage}, [2]uintptr{blk, blk + thinPage}
	if b[0] < a[0] {
		a, b = b, a
	}
	return [2][2]uintptr{a, b}
}

// keepOnly lists the ranges of the user address space to unmap, as
// (address, length), so that only keep remains.
func keepOnly(keep [2][2]uintptr) [3][2]uintptr {
	gap := func(lo, hi uintptr) [2]uintptr {
		if hi <= lo {
			return [2]uintptr{}
		}
		return [2]uintptr{lo, hi - lo}
	}
	a, b := keep[0], keep[1]
	return [3][2]uintptr{gap(thinPage, a[0]), gap(a[1], b[0]), gap(b[1], userTop)}
}

// set stores the instructions and wakes the watchdog to read them. Its
// error says the watchdog is gone: nobody reads the pipe any more.
func (t *thinWatch) set(pgid int, stop, kill int64) error {
	atomic.StoreInt64(&t.blk.stopAt, stop)
	atomic.StoreInt64(&t.blk.killAt, kill)
	if pgid > 0 {
		atomic.StoreInt64(&t.blk.pgid, int64(pgid))
	}
	return t.poke()
}

// poke wakes the watchdog. A full pipe means it has wake-ups pending.
func (t *thinWatch) poke() error {
	if _, err := unix.Write(t.wake, []byte{1}); err == unix.EPIPE {
		return err
	}
	return nil
}

// standDown tells the watchdog to exit without signalling anything.
func (t *thinWatch) standDown() {
	atomic.StoreInt64(&t.blk.done, 1)
	_ = t.poke()
}

func (t *thinWatch) fired() bool { return atomic.LoadInt64(&t.blk.fired) > 0 }

// retire tells the watchdog zklock is done, ends and reaps it, and frees
// the page once nothing runs on it. It returns whether the watchdog fired.
func (t *thinWatch) retire(pid int) bool {
	t.standDown()
	unix.Close(t.wake)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	reap(pid)
	fired := t.fired()
	unix.Munmap(t.page)
	return fired
}

// forkLight runs fork with every mapping of zklock's marked MADV_DONTFORK
// but the ranges the watchdog keeps: the kernel then copies no page tables
// of zklock's heap and stacks into the watchdog, and leaves zklock's own
// pages writable, where a fork would make each fault on its next write.
// Whatever the fork copies all the same, the watchdog unmaps.
func forkLight(keep [2][2]uintptr, fork func() (int64, int64)) (int64, int64) {
	advise(thinPage, userTop-thinPage, unix.MADV_DONTFORK)
	defer undoDontfork()
	for _, k := range keep {
		advise(k[0], k[1]-k[0], unix.MADV_DOFORK)
	}
	return fork()
}

// undoDontfork takes the marks off again. One call over the whole address
// space stops at the first mapping that refuses MADV_DOFORK (the kernel's
// vvar pages, which it lets be marked but not unmarked), so the marks
// past it are taken off mapping by mapping, from /proc/self/maps.
func undoDontfork() {
	if advise(thinPage, userTop-thinPage, unix.MADV_DOFORK) != unix.EINVAL {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(maps), "\n") {
		span, _, _ := strings.Cut(line, " ")
		a, b, ok := strings.Cut(span, "-")
		lo, err1 := strconv.ParseUint(a, 16, 64)
		hi, err2 := strconv.ParseUint(b, 16, 64)
		if ok && err1 == nil && err2 == nil && hi > lo && uintptr(hi) <= userTop {
			advise(uintptr(lo), uintptr(hi-lo), unix.MADV_DOFORK)
		}
	}
}

// advise is madvise(2) on an address range, whatever it covers.
func advise(lo, n uintptr, advice int) unix.Errno {
	if n == 0 {
		return 0
	}
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, lo, n, uintptr(advice))
	return errno
}
