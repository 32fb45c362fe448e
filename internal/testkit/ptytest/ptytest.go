//go:build linux

// Package ptytest gives tests a pseudo-terminal: the master side stands in
// for the user's keyboard and screen, the slave side is handed to the
// process under test.
package ptytest

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// PTY is the master side of a pseudo-terminal. Everything written to the
// terminal is kept, for assertions and for failures.
type PTY struct {
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan struct{}
}

// Open opens a pseudo-terminal pair with nothing but /dev/ptmx and ioctls
// (unlockpt is TIOCSPTLCK, ptsname is TIOCGPTN; devpts makes grantpt
// unnecessary). Neither end becomes the test's controlling terminal. The
// slave is the caller's to close; the master closes with the test, and
// the output is logged if the test failed.
func Open(t testing.TB) (*PTY, *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		// Linux always has devpts; a machine without it cannot run zklock
		// at a terminal either, so this is a failure, not a skip.
		t.Fatalf("no pseudo-terminals: %v", err)
	}
	p := &PTY{master: master, done: make(chan struct{})}
	var n int
	p.Control(t, func(fd int) (err error) {
		if err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return err
		}
		n, err = unix.IoctlGetInt(fd, unix.TIOCGPTN)
		return err
	})
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	// Drain the terminal's output so nothing blocks writing to it.
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		master.Close()
		<-p.done
		if t.Failed() {
			t.Logf("terminal output:\n%q", p.Output())
		}
	})
	return p, slave
}

// Output is everything written to the terminal so far.
func (p *PTY) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Control runs an ioctl on the master without putting it in blocking mode
// (File.Fd would, and then Close could not interrupt the drain).
func (p *PTY) Control(t testing.TB, f func(fd int) error) {
	t.Helper()
	rc, err := p.master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
}

// Foreground returns the terminal's foreground process group, which the
// master side may read without being in the terminal's session.
func (p *PTY) Foreground(t testing.TB) int {
	var pg int
	p.Control(t, func(fd int) (err error) {
		pg, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pg
}

// SetWidth sets the terminal's width in columns, 24 rows high.
func (p *PTY) SetWidth(t testing.TB, cols int) { p.SetSize(t, 24, cols) }

// SetSize sets the terminal's size in rows and columns.
func (p *PTY) SetSize(t testing.TB, rows, cols int) {
	p.Control(t, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
}

// Type writes b as if typed at the keyboard.
func (p *PTY) Type(t testing.TB, b ...byte) {
	t.Helper()
	if _, err := p.master.Write(b); err != nil {
		t.Fatal(err)
	}
}
