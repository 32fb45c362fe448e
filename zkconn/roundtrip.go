package zkconn

import "time"

// The round trip to the server, measured on each connection.
//
// A slow link is not a silent server: at 400 ms a round trip, a reply that
// takes 450 ms is normal, and a connection closed for it only costs a
// reconnect through the same slow link. So the keepalive's idea of silence,
// and the bound on each handshake, follow the round trip measured on the
// wire rather than fixed fractions of the session timeout.
//
// The estimator is TCP's (RFC 6298): a smoothed round trip SRTT and a
// smoothed mean deviation RTTVAR, with gains 1/8 and 1/4; SRTT + 4·RTTVAR
// is the longest wait a healthy connection is expected to need. Each
// connection has its own, and starts afresh (another server, perhaps
// another path). Its first sample is the handshake: ConnectRequest to
// ConnectResponse. Then every reply gives one, with one exception: a
// request sent while an older one still waited for its reply. The server
// answers a connection's requests in order, so such a reply also waits for
// the ones before it (a ping queued behind a sync that waits for the
// leader, say), and would count another request's time as the link's.
//
// Syncs and writes do count: they also take the hop from the server to
// its leader and back, and that time is as much a part of what a healthy
// answer takes on this connection as the link is. With SASL, the handshake
// sample also spans the SASL exchange (sasl.go), which errs on the side of
// patience until the replies that follow correct it.

// roundTrip is one connection's round-trip estimate.
type roundTrip struct {
	srtt, rttvar time.Duration
	samples      int
}

// observe adds one sample.
func (r *roundTrip) observe(sample time.Duration) {
	sample = max(sample, 0)
	if r.samples == 0 {
		r.srtt, r.rttvar = sample, sample/2
	} else {
		dev := r.srtt - sample
		if dev < 0 {
			dev = -dev
		}
		r.rttvar = (3*r.rttvar + dev) / 4
		r.srtt = (7*r.srtt + sample) / 8
	}
	r.samples++
}

// patience is the longest wait for a reply that a healthy connection is
// expected to need: TCP's retransmission timeout, before its lower bound.
func (r roundTrip) patience() time.Duration { return r.srtt + 4*r.rttvar }

// measured reports whether the estimate has a sample.
func (r roundTrip) measured() bool { return r.samples > 0 }

// sampled records a reply that came at replied to a request sent at sent;
// queued says another request was waiting ahead of it. The caller holds
// c.mu.
func (c *trackedConn) sampled(sent, replied time.Time, queued bool) {
	if queued {
		return
	}
	c.rtt.observe(replied.Sub(sent))
	c.t.mu.Lock()
	if c.t.cur == c {
		c.t.rtt = c.rtt
	}
	c.t.mu.Unlock()
}

// roundTrip is the current connection's estimate; until the current
// connection has its first sample, the last connection's.
func (t *wireTracker) roundTrip() roundTrip {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rtt
}

// RoundTrip is the round trip to the server measured on the current
// connection (a smoothed mean, as TCP keeps it): the handshake's time
// until the first reply, and, while a new connection has not yet been
// answered, the previous connection's. It is zero before any connection
// was answered.
func (c *Client) RoundTrip() time.Duration { return c.wire.roundTrip().srtt }

// retransmitFloor is the least time a lost TCP segment takes to be sent
// again (Linux's lowest retransmission timeout): a reply that lost one
// segment on the way comes that much later than the round trip.
const retransmitFloor = 200 * time.Millisecond

// silenceBound is how long a connection may send nothing while a request
// waits for its reply before the keepalive takes its server for silent
// (keepalive.go): the larger of T/10 (100ms at least) and twice the
// connection's patience plus one retransmission. A reply within the
// round trip's usual spread, or one that lost a segment on the way, comes
// well inside it; a server that has stopped never does.
func silenceBound(timeout time.Duration, r roundTrip) time.Duration {
	b := max(timeout/silenceDivisor, minSilence)
	if r.measured() {
		b = max(b, 2*r.patience()+retransmitFloor)
	}
	return b
}

// maxHandshakeDoublings bounds how far handshakes that ran out of time
// stretch the next one's bound: four times the base at most.
const maxHandshakeDoublings = 2

// handshakeBound is how long a new connection may take to answer the
// ConnectRequest. base is the bound for a fast link (handshakeLimit);
// prior is what is known of the round trip before the answer: the larger
// of the last connection's patience and the time the connect itself took
// (a TCP connect, and with TLS its handshake, take at least one round
// trip; a link that turned slow shows it there first). The
// bound is as patient as silenceBound with that round trip; and each
// handshake in a row that ran out of time doubles the base (up to four
// times), as TCP backs off its first retransmissions, so that a first
// connect over a link slower than the base gets through on the second or
// third try.
func handshakeBound(base, prior time.Duration, fails int) time.Duration {
	return max(2*prior+retransmitFloor, base<<min(fails, maxHandshakeDoublings))
}
