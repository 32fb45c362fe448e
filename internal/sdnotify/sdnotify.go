// Package sdnotify sends systemd's service notifications: datagrams of
// KEY=VALUE lines to the socket that NOTIFY_SOCKET names, as sd_notify(3)
// does. The socket is a path, or an abstract name when it starts with "@"
// (Linux's abstract namespace, where systemd binds it). It knows nothing
// of what zklock says; cmd decides that.
package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Env is the variable through which systemd names its socket.
const Env = "NOTIFY_SOCKET"

// ErrFull means the socket's queue was full, and the datagram was
// dropped: a datagram socket whose reader stopped reading fills up, and a
// notification is never worth making zklock wait, not even a second.
var ErrFull = errors.New("the socket's queue is full")

// ErrBadSocket means NOTIFY_SOCKET names neither a path nor an abstract
// socket.
var ErrBadSocket = errors.New("not an absolute path or an @abstract name")

// Conn is an open notification socket.
type Conn struct {
	addr *net.UnixAddr
	mu   sync.Mutex // Send comes from several goroutines
	c    *net.UnixConn
}

// Open connects to socket, NOTIFY_SOCKET's value. A path must be absolute
// (as sd_notify requires); "@name" is the abstract socket "\x00name".
func Open(socket string) (*Conn, error) {
	if len(socket) < 2 || (socket[0] != '/' && socket[0] != '@') {
		return nil, fmt.Errorf("%s=%q: %w", Env, socket, ErrBadSocket)
	}
	// Go's net package maps a leading "@" to the abstract namespace.
	addr := &net.UnixAddr{Name: socket, Net: "unixgram"}
	c, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return nil, err
	}
	return &Conn{addr: addr, c: c}, nil
}

// Send sends the lines as one datagram, as systemd reads them: one
// KEY=VALUE assignment a line. A value holds no newline: each is cut at
// its first one.
func (c *Conn) Send(lines ...string) error {
	var b strings.Builder
	for _, l := range lines {
		if i := strings.IndexByte(l, '\n'); i >= 0 {
			l = l[:i]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.write(b.String())
	if err == nil || errors.Is(err, ErrFull) {
		return err
	}
	// The socket was bound anew at its name (its manager restarted), and
	// ours still points at the old one: connect again, once, as
	// sd_notify(3), which addresses each datagram by name, would reach
	// the new one.
	again, derr := net.DialUnix("unixgram", nil, c.addr)
	if derr != nil {
		return err
	}
	c.c.Close()
	c.c = again
	return c.write(b.String())
}

// write sends msg without waiting: a full queue is ErrFull at once.
func (c *Conn) write(msg string) error {
	raw, err := c.c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), []byte(msg), unix.MSG_DONTWAIT, nil)
		return true // never wait for the socket to take it
	})
	if err != nil {
		return err
	}
	if errors.Is(serr, unix.EAGAIN) || errors.Is(serr, unix.ENOBUFS) {
		return ErrFull
	}
	return serr
}

// Close closes the socket.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.Close()
}
