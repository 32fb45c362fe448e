//go:build unix

package promfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Where the file is written. zklock often runs as root, and a textfile
// directory is a place other users may reach: a name that leads, through
// a symbolic link another user planted, to /etc/passwd or to another
// tool's file must not be replaced. So the name is resolved here one
// component at a time, each directory opened without following a link
// (O_NOFOLLOW) and checked on the open descriptor; the file, its
// temporary file and its sidecar are then opened and renamed relative to
// that descriptor (openat, renameat), never by name again, so that what
// was checked is where the file is written.
//
// A symbolic link is followed only when nobody but root or the running
// user could have made it: the link is theirs, and so is every directory
// on the way to it, none writable by others unless sticky (where others
// cannot remove or replace what is not theirs). The last link must lead
// to a regular file that exists and is named *.prom: a dangling link, or
// one to anything else, is refused rather than created or replaced.
//
// The directory the file is written in is checked too: owned by root or
// the running user, and, if others may write in it, sticky, with the file
// and the sidecar the running user's own.

// place is the file's directory, open and checked, and its name there.
type place struct {
	dir  *os.File
	base string
	name string // the path that led here, for messages
	// shared is set when others may write in dir (it is then sticky):
	// the file and the sidecar must be the running user's.
	shared bool
	euid   uint32
}

// maxLinks bounds following links, as the kernel's ELOOP does.
const maxLinks = 40

// trusted reports whether uid is root or the running user.
func (p *place) trusted(uid uint32) bool { return uid == 0 || uid == p.euid }

// safeDir reports whether a directory lets nobody but root and the
// running user change what it holds.
func (p *place) safeDir(st *unix.Stat_t) bool {
	return p.trusted(st.Uid) && (st.Mode&0o022 == 0 || st.Mode&unix.S_ISVTX != 0)
}

// locate resolves name (see above) to the place the file is written.
func locate(name string) (*place, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	p := &place{name: name, euid: uint32(os.Geteuid())}
	dir, dirPath := (*os.File)(nil), "/"
	var dirSt unix.Stat_t
	enter := func(f *os.File, path string) error {
		if err := unix.Fstat(int(f.Fd()), &dirSt); err != nil {
			f.Close()
			return err
		}
		if dir != nil {
			dir.Close()
		}
		dir, dirPath = f, path
		return nil
	}
	fail := func(err error) (*place, error) {
		if dir != nil {
			dir.Close()
		}
		return nil, err
	}
	root, err := openDir(nil, "/")
	if err != nil {
		return fail(err)
	}
	if err := enter(root, "/"); err != nil {
		return fail(err)
	}
	safe := p.safeDir(&dirSt) // every directory so far is
	todo := strings.Split(abs, "/")
	links, viaLink := 0, ""
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		last := len(todo) == 0
		switch c {
		case "", ".":
			continue
		case "..":
			up, err := openDir(dir, "..")
			if err != nil {
				return fail(err)
			}
			if err := enter(up, filepath.Dir(dirPath)); err != nil {
				return fail(err)
			}
			safe = safe && p.safeDir(&dirSt)
			continue
		}
		at := filepath.Join(dirPath, c)
		var st unix.Stat_t
		err := unix.Fstatat(int(dir.Fd()), c, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) && last && viaLink != "":
			return fail(fmt.Errorf("refusing to write through the symbolic link %s: %s does not exist, and only an existing *.prom file is written through a link", viaLink, at))
		case errors.Is(err, unix.ENOENT) && last:
			p.dir, p.base, dir = dir, c, nil
			return p, p.checkDir(&dirSt, nil)
		case err != nil:
			return fail(fmt.Errorf("%s: %w", at, err))
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if why := p.untrustedLink(safe, &st, dirPath); why != "" {
				return fail(fmt.Errorf("refusing to write through the symbolic link %s: %s, so another user could have planted it", at, why))
			}
			if links++; links > maxLinks {
				return fail(fmt.Errorf("%s: more than %d symbolic links in a row", name, maxLinks))
			}
			target, err := readlinkat(dir, c)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", at, err))
			}
			if last {
				viaLink = at
			}
			if filepath.IsAbs(target) {
				root, err := openDir(nil, "/")
				if err == nil {
					err = enter(root, "/")
				}
				if err != nil {
					return fail(err)
				}
				safe = safe && p.safeDir(&dirSt)
			}
			todo = append(strings.Split(target, "/"), todo...)
		case unix.S_IFDIR:
			if last {
				return fail(fmt.Errorf("%s is a directory", at))
			}
			sub, err := openDir(dir, c)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", at, err))
			}
			if err := enter(sub, at); err != nil {
				return fail(err)
			}
			safe = safe && p.safeDir(&dirSt)
		case unix.S_IFREG:
			if !last {
				return fail(fmt.Errorf("%s: %w", at, unix.ENOTDIR))
			}
			if viaLink != "" && !strings.HasSuffix(c, ".prom") {
				return fail(fmt.Errorf("refusing to write through the symbolic link %s: it leads to %s, which is not a *.prom file", viaLink, at))
			}
			p.dir, p.base, dir = dir, c, nil
			return p, p.checkDir(&dirSt, &st)
		default:
			// A FIFO, a device: refused before a sidecar is made beside
			// it (in /dev, for a link to /dev/zero).
			if !last {
				return fail(fmt.Errorf("%s: %w", at, unix.ENOTDIR))
			}
			return fail(fmt.Errorf("metrics file %s is not a regular file", at))
		}
	}
	return fail(fmt.Errorf("%s is a directory", abs))
}

// untrustedLink says why a link at dirPath may not be followed, or "".
func (p *place) untrustedLink(safe bool, st *unix.Stat_t, dirPath string) string {
	switch {
	case !p.trusted(st.Uid):
		return fmt.Sprintf("it is owned by uid %d, neither root nor this user", st.Uid)
	case !safe:
		return fmt.Sprintf("a directory on its path (%s or above) is owned by another user or writable by others", dirPath)
	}
	return ""
}

// checkDir checks the directory the file is written in, dir, and the
// file there, file (nil when there is none yet), and closes the place if
// they fail.
func (p *place) checkDir(dir, file *unix.Stat_t) error {
	where := filepath.Dir(filepath.Join(p.dirName(), p.base))
	var err error
	switch {
	case !p.trusted(dir.Uid):
		err = fmt.Errorf("refusing to write in %s: it is owned by uid %d, who could replace the file under zklock; use a directory of root's or this user's", where, dir.Uid)
	case dir.Mode&0o022 != 0 && dir.Mode&unix.S_ISVTX == 0:
		err = fmt.Errorf("refusing to write in %s: others may write in it and it is not sticky, so the file could be replaced under zklock; run chmod go-w %s, or chmod +t", where, where)
	case dir.Mode&0o022 != 0:
		p.shared = true
		if file != nil && file.Uid != p.euid {
			err = fmt.Errorf("refusing to write %s: it belongs to uid %d in a directory others may write in; name a file of this user's own", filepath.Join(where, p.base), file.Uid)
		}
	}
	if err != nil {
		p.close()
	}
	return err
}

// dirName is the directory's path for messages: the one the name gave.
func (p *place) dirName() string { return p.dir.Name() }

func (p *place) close() {
	if p.dir != nil {
		p.dir.Close()
	}
}

// openDir opens the directory name in dir (nil: name is absolute), never
// through a link.
func openDir(dir *os.File, name string) (*os.File, error) {
	at := unix.AT_FDCWD
	path := name
	if dir != nil {
		at = int(dir.Fd())
		path = filepath.Join(dir.Name(), name)
	}
	fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Clean(path)), nil
}

func readlinkat(dir *os.File, name string) (string, error) {
	for size := 256; ; size *= 2 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(int(dir.Fd()), name, b)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
}

// write replaces the file with data: a temporary file beside it, named
// so that the collector, which reads *.prom files only, never reads it,
// synced to disk before it is renamed into place, so that a crash leaves
// the old file or the new, never an empty one.
func (p *place) write(data []byte) error {
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return err
	}
	tmp := "." + p.base + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	d := int(p.dir.Fd())
	fd, err := unix.Openat(d, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(p.dirName(), tmp), err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(p.dirName(), tmp))
	_, err = f.Write(data)
	if err == nil {
		// node_exporter runs as its own user: the file is for everyone
		// to read, as a file written by a shell with umask 022 would be.
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(d, tmp, d, p.base)
	}
	if err != nil {
		unix.Unlinkat(d, tmp, 0)
		return fmt.Errorf("%s: %w", filepath.Join(p.dirName(), p.base), err)
	}
	return nil
}

// version is what changes each time a run replaces the file: its inode
// and change time, zero while there is none.
func (p *place) version() [3]int64 {
	var st unix.Stat_t
	if unix.Fstatat(int(p.dir.Fd()), p.base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return [3]int64{}
	}
	sec, nsec := st.Ctim.Unix()
	return [3]int64{int64(st.Ino), sec, nsec}
}
