package zkconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
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
	tls  bool                 // the dialer speaks TLS
	logf func(string, ...any) // -v's progress lines; may be nil

	mu  sync.Mutex
	err error
}

func (f *lastFailure) set(err error) {
	f.mu.Lock()
	same := f.err != nil && f.err.Error() == err.Error()
	f.err = err
	f.mu.Unlock()
	// The library retries every server in turn: say each new reason once.
	if !same && f.logf != nil {
		f.logf("connecting: %v", err)
	}
}

// noSession is the error for a connect that found no session within
// timeout: ErrUnavailable, and the latest failure, if any, so that the one
// line names the cause and errors.As finds a *TLSError in it.
func (f *lastFailure) noSession(servers []string, timeout time.Duration) error {
	f.mu.Lock()
	last := f.err
	f.mu.Unlock()
	msg := fmt.Sprintf("no session with %s within %s", strings.Join(servers, ","), timeout)
	if last == nil {
		return fmt.Errorf("%w: %s", ErrUnavailable, msg)
	}
	return fmt.Errorf("%w: %s; last failure: %w", ErrUnavailable, msg, last)
}

// TLSProblem is what a failed TLS handshake says about the set-up.
type TLSProblem int

const (
	TLSOther         TLSProblem = iota
	TLSUntrusted                // the server's certificate does not verify against the CA
	TLSNameMismatch             // it does not name the server as written in the connect string
	TLSClientRefused            // the server refused the client's certificate, or its absence
	TLSNotTLS                   // the server answered, but not in TLS
)

// TLSError is a TLS handshake with a server that failed.
type TLSError struct {
	Address string
	Problem TLSProblem
	Err     error
}

func (e *TLSError) Error() string {
	return fmt.Sprintf("TLS handshake with %s failed: %v", e.Address, e.Err)
}

func (e *TLSError) Unwrap() error { return e.Err }

// tlsError classifies a failure of a TLS dial, or returns nil for one that
// failed before the handshake (the TCP connect).
func tlsError(address string, err error) *TLSError {
	var (
		op     *net.OpError
		verify *tls.CertificateVerificationError
		name   x509.HostnameError
		record tls.RecordHeaderError
	)
	e := &TLSError{Address: address, Err: err}
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return nil
	case errors.As(err, &name):
		e.Problem = TLSNameMismatch
	case errors.As(err, &verify):
		e.Problem = TLSUntrusted
	case errors.As(err, &record):
		e.Problem = TLSNotTLS
	case errors.As(err, &op) && op.Op == "remote error":
		// The server sent an alert: in a handshake it verifies the
		// client's certificate, so it is the one it refused.
		e.Problem = TLSClientRefused
	}
	return e
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
			} else if te := tlsError(address, err); f.tls && te != nil {
				err = te
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
// it before answering the session handshake. The usual cause is a server
// that is not serving yet: during a leader election, and while it starts,
// a server accepts connections and closes each at its ConnectRequest
// ("ZooKeeperServer not running"). Next comes the server's cap on
// connections from one client address (maxClientCnxns, 60 by default),
// which each waiting zklock counts against with its one connection.
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
	if err == nil || c.heard.Load() {
		return
	}
	if closedByPeer(err) {
		c.fail.set(c.fail.closedInHandshake(c.address))
		return
	}
	// In TLS 1.3 the server verifies the client's certificate after the
	// client has finished its side of the handshake, so its refusal
	// arrives on the first read instead of in the dial.
	if te := tlsError(c.address, err); c.fail.tls && te != nil && te.Problem == TLSClientRefused {
		c.fail.set(te)
	}
}

func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// closedInHandshake names the likely causes, the likeliest first: a
// server not serving yet (every election closes every client's
// connection this way, on every member, for a few seconds), then the
// connection cap, then a port of the other kind: a secureClientPort drops
// a client that does not speak TLS in the same way, and a plain port one
// that does (it reads the TLS hello as a frame too large to be one).
func (f *lastFailure) closedInHandshake(address string) error {
	port := "a port that does not speak TLS"
	if !f.tls {
		port = "a TLS-only port"
	}
	return fmt.Errorf("%s %w: a server not serving yet (a leader election, or start-up), too many connections from this host (the server's maxClientCnxns, 60 per client address by default), or %s?",
		address, ErrClosedInHandshake, port)
}
