// Package files reads every file zklock is given by name: its
// configuration, the auth and password files, the TLS and JAAS files,
// Kerberos's keytab, ticket cache and krb5.conf, and the metrics file
// that runs read back before they add to it. All go through Read,
// so that none of them can hang zklock or fill its memory:
//
//   - A file is opened without blocking and must be a regular file: a FIFO
//     named by mistake would wait for a writer forever, and a device such
//     as /dev/zero never ends. What is checked is the open file, not the
//     name, so what is checked is what is read.
//   - It must not be larger than its kind allows: each kind's cap is many
//     times what a real file holds, and reading stops one byte past it.
//   - A file that holds a secret (a password, a private key, a keytab's
//     keys, a ticket) must be private to its owner: one that other users
//     may access has already leaked, and using it would hide that, as ssh
//     refuses such a private key. One exception, libpq's for client keys:
//     a file owned by root may also be read by its group (mode 0640 or
//     less). That is how a system shares a secret with the services
//     allowed to use it (Debian's ssl-cert group for TLS keys, a hadoop
//     group for service keytabs), and only root could have made it so.
//
// A refusal is one error, naming the kind of file, the file and the fix,
// which zklock reports as a usage error (64).
package files

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrRefused is what every *Error is.
var ErrRefused = errors.New("file refused")

// Error is a file Read refused or could not read.
type Error struct {
	What, Name string // the kind of file ("TLS key") and its name
	Problem    string // "is not a regular file", …
	cause      error  // why it could not be opened or read, if so
}

func (e *Error) Error() string { return e.What + " " + e.Name + " " + e.Problem }

// Is makes every *Error an ErrRefused.
func (e *Error) Is(target error) bool { return target == ErrRefused }

// Unwrap is the cause of an open or a read that failed (fs.ErrNotExist…).
func (e *Error) Unwrap() error { return e.cause }

// Kind is a kind of file zklock reads: what to call it, how large it may
// be, and whether its content is a secret.
type Kind struct {
	What string
	Max  int64
	// Secret reports whether data, the file's content, holds a secret; nil
	// means never. A secret's file must be private to its owner.
	Secret func(data []byte) bool
}

// Always is a Secret for files that are secret whatever they hold.
func Always([]byte) bool { return true }

// The kinds of file zklock reads.
var (
	Config       = Kind{What: "configuration file", Max: 64 << 10}
	AuthFile     = Kind{What: "auth file", Max: 4 << 10, Secret: Always}
	PasswordFile = Kind{What: "password file", Max: 4 << 10, Secret: Always}
	// A system CA bundle is a few hundred KiB.
	TLSCA   = Kind{What: "TLS CA file", Max: 4 << 20}
	TLSCert = Kind{What: "TLS certificate", Max: 1 << 20}
	TLSKey  = Kind{What: "TLS key", Max: 1 << 20, Secret: Always}
	// A JAAS file is a secret when a login module in it has a password;
	// zkconn says which (JAASSecret).
	JAAS        = Kind{What: "JAAS file", Max: 64 << 10}
	Keytab      = Kind{What: "keytab", Max: 1 << 20, Secret: Always}
	TicketCache = Kind{What: "ticket cache", Max: 1 << 20, Secret: Always}
	Krb5Conf    = Kind{What: "Kerberos configuration", Max: 1 << 20}
	// The metrics file that runs share: about 1.5 KiB a job, so this
	// holds some ten thousand jobs.
	Metrics = Kind{What: "metrics file", Max: 16 << 20}
)

// Read reads the file name as a file of kind k (see the package comment).
// An error opening or reading it is an *Error too, wrapping the cause.
func (k Kind) Read(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, k.fail(name, err)
	}
	defer f.Close()
	return k.read(f, name)
}

// read reads the open file f, named name, as Read does.
func (k Kind) read(f *os.File, name string) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, k.fail(name, err)
	}
	switch {
	case st.IsDir():
		return nil, &Error{What: k.What, Name: name, Problem: "is a directory"}
	case !st.Mode().IsRegular():
		return nil, &Error{What: k.What, Name: name, Problem: "is not a regular file"}
	case st.Size() > k.Max:
		return nil, k.tooLarge(name)
	}
	b, err := io.ReadAll(io.LimitReader(f, k.Max+1))
	if err != nil {
		return nil, k.fail(name, err)
	}
	if int64(len(b)) > k.Max {
		return nil, k.tooLarge(name) // it grew while read
	}
	if k.Secret != nil && k.Secret(b) && !private(st) {
		return nil, &Error{What: k.What, Name: name,
			Problem: fmt.Sprintf("is accessible by group or others (mode %04o); run chmod 600 %s", st.Mode().Perm(), name)}
	}
	return b, nil
}

// private reports whether a secret's file is private enough (see the
// package comment): no access for group or others, or, owned by root,
// read access for its group at most.
func private(st os.FileInfo) bool {
	perm := st.Mode().Perm()
	if perm&0o077 == 0 {
		return true
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Uid == 0 && perm&0o037 == 0
}

func (k Kind) tooLarge(name string) error {
	return &Error{What: k.What, Name: name, Problem: "is larger than " + size(k.Max)}
}

func (k Kind) fail(name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{What: k.What, Name: name, Problem: "cannot be read: " + err.Error(), cause: err}
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
