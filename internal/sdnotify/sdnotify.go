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
	"time"
)

// Env is the variable through which systemd names its socket.
const Env = "NOTIFY_SOCKET"

// sendTimeout bounds one send: a datagram socket whose reader stopped
// reading fills up, and a notification is never worth blocking zklock.
const sendTimeout = time.Second

// ErrBadSocket means NOTIFY_SOCKET names neither a path nor an abstract
// socket.
var ErrBadSocket = errors.New("not an absolute path or an @abstract name")

// Conn is an open notification socket.
type Conn struct {
	c *net.UnixConn
}

// Open connects to socket, NOTIFY_SOCKET's value. A path must be absolute
// (as sd_notify requires); "@name" is the abstract socket "\x00name".
func Open(socket string) (*Conn, error) {
	if len(socket) < 2 || (socket[0] != '/' && socket[0] != '@') {
		return nil, fmt.Errorf("%s=%q: %w", Env, socket, ErrBadSocket)
	}
	// Go's net package maps a leading "@" to the abstract namespace.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return nil, err
	}
	return &Conn{c: c}, nil
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
	if err := c.c.SetWriteDeadline(time.Now().Add(sendTimeout)); err != nil {
		return err
	}
	_, err := c.c.Write([]byte(b.String()))
	return err
}

// Close closes the socket.
func (c *Conn) Close() error { return c.c.Close() }
