package zkconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrTLSHandshake means a server accepted the TCP connection but the TLS
// handshake with it failed (a certificate that does not verify, a name that
// does not match, a client certificate it refused, or a plaintext port).
var ErrTLSHandshake = errors.New("TLS handshake failed")

// Reach is how one server answered a bare connect, before any ZooKeeper
// request: what `zklock doctor` reports per server.
type Reach struct {
	// Connect is the time the TCP connect took: about one network round
	// trip.
	Connect time.Duration
	// Handshake is the time the TLS handshake took; 0 without TLS.
	Handshake time.Duration
	// TLSVersion is the negotiated version ("TLS 1.3"); "" without TLS.
	TLSVersion string
}

// ReachServer connects to one server of a connect string (host:port) and,
// when cfg is not nil, completes a TLS handshake with it, as Dial's dialer
// does, checking the certificate against the host as written. It sends no
// ZooKeeper request. A failure to connect is ErrUnavailable, one of the
// handshake ErrTLSHandshake.
func ReachServer(ctx context.Context, address string, cfg *tls.Config, timeout time.Duration) (Reach, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r Reach
	start := time.Now()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", address)
	if err != nil {
		return r, &unreachableError{cause: err}
	}
	defer conn.Close()
	r.Connect = time.Since(start)
	if cfg == nil {
		return r, nil
	}
	start = time.Now()
	tc := tls.Client(conn, serverTLS(cfg, address))
	if err := tc.HandshakeContext(ctx); err != nil {
		if closedByPeer(err) {
			err = errors.New("the server closed the connection (a plaintext port, or it refused the client certificate)")
		}
		return r, fmt.Errorf("%w: %v", ErrTLSHandshake, err)
	}
	r.Handshake = time.Since(start)
	r.TLSVersion = tls.VersionName(tc.ConnectionState().Version)
	return r, nil
}

// serverTLS is cfg for a connection to address: the certificate must name
// the server as written in the connect string (see hostList), or that IP
// when an IP was written, unless cfg names a server itself.
func serverTLS(cfg *tls.Config, address string) *tls.Config {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(address)
	}
	return cfg
}

// unreachableError is a server that a connect did not reach: ErrUnavailable,
// said as briefly as the checklist line that names the server wants it.
type unreachableError struct{ cause error }

func (e *unreachableError) Error() string {
	cause := e.cause
	var op *net.OpError
	if errors.As(cause, &op) {
		cause = op.Err // without "dial tcp ADDRESS", which the caller names
	}
	return "not reachable: " + cause.Error()
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }
