//go:build unix

package promfile

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockSidecar takes the sidecar's exclusive lock, waiting at most
// lockWait, and returns the function that gives it back. The lock is the
// kernel's: it goes with the process if that dies holding it.
func lockSidecar(name string) (unlock func(), err error) {
	// Read-only: flock needs an open file, not a writable one, and the
	// sidecar another user's run made is theirs, readable by all. Without
	// blocking: a FIFO in its place would wait for a writer.
	f, err := os.OpenFile(sidecar(name), os.O_RDONLY|os.O_CREATE|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock %s: not a regular file", f.Name())
	}
	// A blocking flock cannot be given up on: try, and back off, until
	// the deadline.
	deadline := time.Now().Add(lockWait)
	pause := time.Millisecond
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file unlocks it
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: still held by another writer after %s", f.Name(), lockWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
