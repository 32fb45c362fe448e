//go:build unix

package files

import (
	"os"

	"golang.org/x/sys/unix"
)

// ReadAt reads the file base in the open directory dir as Read reads a
// name, but never through a symbolic link in base's place: a link there
// is an error (ELOOP), not the file it points to. name is what messages
// call the file. It is for files in a directory whose checks were made
// on dir itself, so that what was checked is where the file is read.
func (k Kind) ReadAt(dir *os.File, base, name string) ([]byte, error) {
	fd, err := unix.Openat(int(dir.Fd()), base, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, k.fail(name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return k.read(f, name)
}
