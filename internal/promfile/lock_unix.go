//go:build unix

package promfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lockSidecar takes the sidecar's exclusive lock, waiting at most
// lockWait after the file last changed, and returns the function that gives it back. The lock is the
// kernel's: it goes with the process if that dies holding it. The sidecar
// is hidden and not *.prom, beside the file.
func (p *place) lockSidecar() (unlock func(), err error) {
	name := filepath.Join(p.dirName(), "."+p.base+".lock")
	// Read-only: flock needs an open file, not a writable one, and the
	// sidecar another user's run made is theirs, readable by all. Without
	// blocking: a FIFO in its place would wait for a writer. Never
	// through a link: one in its place would create or lock a file
	// elsewhere.
	fd, err := unix.Openat(int(p.dir.Fd()), "."+p.base+".lock",
		unix.O_RDONLY|unix.O_CREAT|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("lock %s: not a regular file", name)
	}
	if p.shared && st.Uid != p.euid {
		// Another user's lock in a directory all may write in: they
		// could hold it for ever.
		f.Close()
		return nil, fmt.Errorf("lock %s: it belongs to uid %d in a directory others may write in; name a file of this user's own", name, st.Uid)
	}
	// A blocking flock cannot be given up on: try, and back off, until
	// the deadline. Each run that replaces the file while this one waits
	// shows that the writers move on, only many at once (each syncs its
	// file to disk, which a busy disk makes slow): the deadline then
	// starts again. Only a writer that holds the lock and writes nothing
	// makes it run out.
	deadline := time.Now().Add(lockWait)
	seen := p.version()
	pause := time.Millisecond
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file unlocks it
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if v := p.version(); v != seen {
			seen, deadline = v, time.Now().Add(lockWait)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: still held by another writer after %s", name, lockWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
