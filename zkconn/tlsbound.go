package zkconn

import (
	"errors"
	"net"
	"time"
)

// # How long a TLS handshake may take
//
// A TLS handshake costs the server real work (a JVM's first handshakes
// run cold code, and its key exchange competes for the CPU), so on a
// loaded machine it can take seconds. That is a slow server, not a failed
// one, and a bound that cut it short would cut every retry short the same
// way: each new connection starts the handshake over.
//
// So the bound grows where it may. Once a session exists, a wedged server
// must cost a reconnect little (the session's deadlines run meanwhile):
// the TCP connect's time and two round trips of the handshake bound
// (handshakeLimit, wire.go), which a handshake in a row that ran out of
// time doubles, as for the ConnectRequest. Before the first session only
// --connect-timeout is at stake: each server of the connect string may
// take its share of what is left of it, so a lone server, however slow,
// has all of it, while a wedged one among several costs the others no
// more than their turn.

// tlsLimit is the bound for a TLS connect (TCP and handshake) to one
// server, given go-zookeeper's dial timeout for the TCP connect.
func (c *Client) tlsLimit(timeout time.Duration) time.Duration {
	limit := timeout + 2*c.wire.handshakeLimit()
	if c.sess.established() || c.connectBy.IsZero() {
		return limit
	}
	share := time.Until(c.connectBy) / time.Duration(max(len(c.opts.ConnString.Servers), 1))
	return max(limit, share)
}

// tlsTimedOut counts a TLS connect that ran out of time with the
// handshakes that did, so that the next one is given longer.
func (c *Client) tlsTimedOut(err error) {
	var timeout net.Error
	if errors.As(err, &timeout) && timeout.Timeout() {
		c.wire.mu.Lock()
		c.wire.handshakeFails++
		c.wire.mu.Unlock()
	}
}
