package zkconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// lastFailure remembers why the latest attempt to reach a server failed.
// go-zookeeper only logs such failures and keeps trying the next server, so
// a connect that runs out of time would otherwise say no more than that it
// timed out, whether the cause was a TLS name mismatch, a refused port or a
// server turning connections away.
type lastFailure struct {
	tls bool // the dialer speaks TLS

	mu  sync.Mutex
	err error
}

func (f *lastFailure) set(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// reason is "" before any failure, else "; last failure: …", ready to end a
// one-line message.
func (f *lastFailure) reason() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		return ""
	}
	return "; last failure: " + f.err.Error()
}

// dialer records the failures of d, and watches each connection it makes
// until the server has said something.
func (f *lastFailure) dialer(d zk.Dialer) zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		conn, err := d(network, address, timeout)
		if err != nil {
			var op *net.OpError
			if closedByPeer(err) {
				// Closed during the TLS handshake.
				err = f.closedInHandshake(address)
			} else if !errors.As(err, &op) {
				// A net.OpError names the address; a TLS verification
				// error does not.
				err = fmt.Errorf("%s: %w", address, err)
			}
			f.set(err)
			return nil, err
		}
		return &handshakeConn{Conn: conn, address: address, fail: f}, nil
	}
}

// ErrClosedInHandshake means a server accepted the TCP connection and closed
// it before answering the session handshake. The usual cause is the server's
// cap on connections from one client address (maxClientCnxns, 60 by
// default), which each waiting zklock counts against with its one
// connection.
var ErrClosedInHandshake = errors.New("closed the connection during the handshake")

// handshakeConn notices a server that closes the connection before it has
// sent a single byte: ZooKeeper turns away a client over its connection cap
// exactly so, and go-zookeeper reports it only as "authentication failed:
// EOF".
type handshakeConn struct {
	net.Conn
	address string
	fail    *lastFailure
	heard   atomic.Bool
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.Store(true)
	}
	c.check(err)
	return n, err
}

func (c *handshakeConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.check(err)
	return n, err
}

func (c *handshakeConn) check(err error) {
	if err != nil && !c.heard.Load() && closedByPeer(err) {
		c.fail.set(c.fail.closedInHandshake(c.address))
	}
}

func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// closedInHandshake names the likely causes: the connection cap first, and
// without TLS also a secureClientPort, which drops a client that does not
// speak TLS in the same way.
func (f *lastFailure) closedInHandshake(address string) error {
	likely := "too many connections from this host? (the server's maxClientCnxns, 60 per client address by default)"
	if !f.tls {
		likely = "too many connections from this host (the server's maxClientCnxns, 60 per client address by default), or a TLS-only port?"
	}
	return fmt.Errorf("%s %w: %s", address, ErrClosedInHandshake, likely)
}
