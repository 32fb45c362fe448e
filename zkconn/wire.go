package zkconn

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// wireTracker watches the bytes go-zookeeper exchanges with the server to
// learn facts the library keeps to itself:
//
//   - the session timeout granted on each connect, from the
//     ConnectResponse (the server clamps the requested timeout to its own
//     bounds, and the leader expires the session on the clamped value; see
//     timeout.go for which of them the deadlines count with);
//   - when the server last answered at all: the send time of the last
//     request that got a reply (lastHeard). It tells a live connection from
//     a silent one, nothing more: see quorum.go for why a reply from one
//     server is no proof that the session's expiry clock was reset;
//   - when the ensemble's leader last certainly touched the session
//     (quorumHeard), by the rules in quorum.go;
//   - the zxid of each create, which is the created node's czxid.
//
// Replies are paired with requests by xid (pings, auth and set-watches
// packets use fixed negative xids; those pair with the oldest request of the
// same xid). The server answers a connection's requests strictly in order,
// so a reply also settles every older request still waiting: any of those
// that got no reply was lost and never will. Watch notifications (xid -1)
// are not replies.
type wireTracker struct {
	mu          sync.Mutex
	to          timeouts
	lastHeard   time.Time
	quorumHeard time.Time
	// changed is closed, and replaced, whenever quorumHeard or the
	// timeouts change: the guard's deadlines follow each change at once.
	changed chan struct{}
	now     func() time.Time
	// handshake bounds the wait for a ConnectResponse on a fast link (see
	// trackedConn's deadline methods); each connection stretches it for
	// the round trip (handshakeBound). Zero leaves go-zookeeper's own
	// deadline alone.
	handshake time.Duration
	// handshakeFails counts the handshakes in a row that ran out of time.
	handshakeFails int
	// standalone is set once the server is known to run alone: then it is
	// its own leader, and every reply certifies its request (quorum.go).
	standalone bool
	// refusals counts the connections in a row that carried the session
	// and ended with no successful reply (see trackedConn.ended).
	refusals int
	// authRequired: a reply said the server demands authentication.
	authRequired bool
	// cur is the connection go-zookeeper uses now: the last one dialled.
	cur *trackedConn
	// rtt is the round-trip estimate of cur, or of the connection before
	// until cur has a sample (roundtrip.go).
	rtt roundTrip
	// created maps the paths of nodes this session created to the zxid of
	// their create, which is the node's czxid: the fencing token, without
	// the extra round trip of an exists call.
	created map[string]int64
	// maxZxid is the highest zxid of a transaction that any reply or
	// notification carried: the newest state of the ensemble this client
	// has seen (restore.go).
	maxZxid int64
	// session and passwd are the session's id and password, from its
	// ConnectResponse: what resuming it on a connection of zklock's own
	// takes (raw.go).
	session int64
	passwd  []byte
	// refusedResume, if set, is told of each connection that carried a
	// resume of the session and ended without a ConnectResponse, with
	// the server's address (restore.go). Set before the first dial.
	refusedResume func(address string)
}

// maxCreated bounds the created map; a run creates a handful of nodes.
const maxCreated = 64

// trackedConn is one TCP (or TLS) connection seen through a wireTracker.
type trackedConn struct {
	net.Conn
	t       *wireTracker
	dialed  time.Time
	address string // the server, as the dialer was given it
	// limit bounds the wait for the ConnectResponse (zero: no bound),
	// fixed when the connection is made (handshakeBound).
	limit time.Duration

	mu        sync.Mutex
	pending   []request    // requests awaiting replies, in order
	answered  []completion // recent requests that got a reply, in order
	handshook bool         // the ConnectResponse has arrived
	resumed   bool         // the ConnectRequest resumed a session
	dropped   bool         // closed by the keepalive for silence
	// closedHere: go-zookeeper closed it (see ended).
	closedHere bool
	// answeredAny: a reply came on this connection after the handshake;
	// counted: its end was counted as a refusal (see ended).
	answeredAny, counted bool
	// rtt is this connection's round-trip estimate (roundtrip.go).
	rtt roundTrip
	// lastByte is when bytes last came from the server.
	lastByte time.Time
	// timedOut: a read ran into the handshake bound.
	timedOut bool
	out      frameReader // client → server
	in       frameReader // server → client
}

// request is what the tracker remembers of a request until its reply.
type request struct {
	sent   time.Time
	xid    int32
	opcode int32
	// resume: a ConnectRequest that resumes a session (its session id is
	// not 0).
	resume bool
	// queued: an older request was still waiting for its reply when this
	// one was sent (roundtrip.go).
	queued bool
}

// wrap returns conn to address instrumented by t, and makes it the
// current connection; took is how long connecting took (TCP, and TLS if
// used), zero if unknown.
func (t *wireTracker) wrap(conn net.Conn, address string, took time.Duration) net.Conn {
	c := &trackedConn{Conn: conn, t: t, dialed: t.now(), address: address}
	t.mu.Lock()
	c.limit = t.handshakeLimitLocked(took)
	t.cur = c
	t.mu.Unlock()
	return c
}

// handshakeLimitLocked is the handshake bound for a connection made now,
// whose connect took took; the caller holds t.mu.
func (t *wireTracker) handshakeLimitLocked(took time.Duration) time.Duration {
	if t.handshake <= 0 {
		return 0
	}
	// The connect just took at least one round trip on the path to this
	// server: on a link that turned slow since the last connection was
	// measured, it is the only fresh sample.
	prior := took
	if t.rtt.measured() {
		prior = max(prior, t.rtt.patience())
	}
	return handshakeBound(t.handshake, prior, t.handshakeFails)
}

// handshakeLimit is the handshake bound for the next connection, before
// its connect: what the TLS handshake's two round trips are each given.
func (t *wireTracker) handshakeLimit() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handshakeLimitLocked(0)
}

func (c *trackedConn) Write(b []byte) (int, error) {
	sent := c.t.now()
	c.mu.Lock()
	c.out.feed(b, func(first bool, frame []byte) {
		// Every frame the client sends expects exactly one reply: the
		// ConnectRequest a ConnectResponse, every other request a reply
		// with the same xid.
		r := request{sent: sent, queued: len(c.pending) > 0}
		if first && len(frame) >= 24 {
			// ConnectRequest: int32 protocolVersion, int64 lastZxidSeen,
			// int32 timeOut, int64 sessionId, …
			r.resume = binary.BigEndian.Uint64(frame[16:24]) != 0
			c.resumed = r.resume
		}
		if !first && len(frame) >= 8 {
			r.xid = int32(binary.BigEndian.Uint32(frame[0:4]))
			r.opcode = int32(binary.BigEndian.Uint32(frame[4:8]))
		}
		c.pending = append(c.pending, r)
	})
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		replied := c.t.now()
		c.mu.Lock()
		c.lastByte = replied
		c.in.feed(b[:n], func(first bool, frame []byte) {
			if first {
				c.connectResponse(frame, replied)
				return
			}
			if len(frame) >= 12 {
				c.t.sawZxid(int64(binary.BigEndian.Uint64(frame[4:12])))
			}
			if len(frame) >= 4 && int32(binary.BigEndian.Uint32(frame)) == -1 {
				return // a watch notification, not a reply
			}
			c.reply(frame, replied)
		})
		c.mu.Unlock()
	}
	if err != nil {
		c.ended(err)
	}
	return n, err
}

// ended counts a connection that carried the session but ended before
// the server answered anything on it successfully, not even a ping: a
// server that demands authentication (enforce.auth) closes the connection
// at the first request, and go-zookeeper resumes the session on a new
// one, over and over. A reply on any connection resets the count (see
// refused).
//
// Only the server's own close counts, as a refusal or as a refused resume
// (restore.go): an end of stream or a reset, on a connection zklock did
// not close itself. A connection the keepalive dropped as silent, one that
// go-zookeeper closed, and a read that ran into a deadline (the handshake
// bound's, or go-zookeeper's) say nothing of what the server accepts: on a
// slow link they happen to every connection, and counting them turned a
// reply slower than the silence bound into a permission error.
func (c *trackedConn) ended(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var timeout net.Error
	if !c.handshook && !c.timedOut && errors.As(err, &timeout) && timeout.Timeout() {
		// Before the handshake, every deadline is the handshake bound
		// (capped): the next connection is given longer.
		c.timedOut = true
		c.t.mu.Lock()
		c.t.handshakeFails++
		c.t.mu.Unlock()
	}
	if c.dropped || c.closedHere || !serverClosed(err) {
		return
	}
	if c.resumed && !c.handshook && !c.counted && c.t.refusedResume != nil {
		// The server closed a resume without answering it (restore.go).
		c.counted = true
		c.t.refusedResume(c.address)
		return
	}
	if c.counted || !c.handshook || c.answeredAny {
		return
	}
	c.counted = true
	c.t.mu.Lock()
	c.t.refusals++
	c.t.mu.Unlock()
}

// serverClosed reports whether a read's error is the server closing the
// connection: an end of stream (with TLS, perhaps cut short) or a reset.
func serverClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// Close closes the connection for go-zookeeper: its own close, which ended
// does not count.
func (c *trackedConn) Close() error {
	c.mu.Lock()
	c.closedHere = true
	c.mu.Unlock()
	return c.Conn.Close()
}

// The handshake deadline. go-zookeeper waits for a ConnectResponse for ten
// times its read timeout (about 6.7 × the session timeout) before it tries
// the next server, so one wedged server (a stopped JVM, a frozen VM: TCP
// accepts, nothing answers) in the connect string would stall a connect
// for longer than any sensible --connect-timeout, and a reconnect for
// longer than the session could survive. Until the ConnectResponse has
// arrived, every deadline go-zookeeper sets is capped at dial time plus
// t.handshake, and a cleared deadline is replaced by that cap (go-zookeeper
// clears it between reading the response's length and its body).

func (c *trackedConn) capped(d time.Time) time.Time {
	c.mu.Lock()
	done := c.handshook
	c.mu.Unlock()
	if done || c.limit <= 0 {
		return d
	}
	limit := c.dialed.Add(c.limit)
	if d.IsZero() || d.After(limit) {
		return limit
	}
	return d
}

func (c *trackedConn) SetDeadline(d time.Time) error { return c.Conn.SetDeadline(c.capped(d)) }

func (c *trackedConn) SetReadDeadline(d time.Time) error {
	return c.Conn.SetReadDeadline(c.capped(d))
}

func (c *trackedConn) SetWriteDeadline(d time.Time) error {
	return c.Conn.SetWriteDeadline(c.capped(d))
}

// setHandshake sets the handshake bound on a fast link for the
// connections to come.
func (t *wireTracker) setHandshake(d time.Duration) {
	t.mu.Lock()
	t.handshake = d
	t.mu.Unlock()
}

// connectResponse: int32 protocolVersion, int32 timeOut (ms), int64 sessionId, …
func (c *trackedConn) connectResponse(frame []byte, replied time.Time) {
	req, ok := c.pop()
	if !ok || len(frame) < 16 {
		return
	}
	timeout := time.Duration(int32(binary.BigEndian.Uint32(frame[4:8]))) * time.Millisecond
	session := int64(binary.BigEndian.Uint64(frame[8:16]))
	if session == 0 {
		return // the server refused to resume the session: it has expired
	}
	// … then buffer passwd: int32 length and the bytes.
	var passwd []byte
	if len(frame) >= 20 {
		if n := int(int32(binary.BigEndian.Uint32(frame[16:20]))); n > 0 && 20+n <= len(frame) {
			passwd = append([]byte(nil), frame[20:20+n]...)
		}
	}
	c.handshook = true
	// The connection's own deadline may still be the capped one: clear it
	// for go-zookeeper, which sets its own before every read from now on.
	_ = c.Conn.SetDeadline(time.Time{})
	c.remember(completion{sent: req.sent, replied: replied})
	c.sampled(req.sent, replied, req.queued)
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.t.handshakeFails = 0
	c.t.session, c.t.passwd = session, passwd
	c.t.to.connected(timeout, req.resume, req.sent)
	if req.sent.After(c.t.lastHeard) {
		c.t.lastHeard = req.sent
	}
	// Creating or resuming a session goes through the leader (see
	// quorum.go): the leader's clock for it restarted after req.sent.
	if req.sent.After(c.t.quorumHeard) {
		c.t.quorumHeard = req.sent
	}
	c.t.to.certified(c.t.quorumHeard)
	c.t.notifyLocked()
}

// sawZxid records a zxid the ensemble showed this client, if it names a
// transaction. A zxid whose counter (its low 32 bits) is 0 names none: a
// new leader reports its epoch's first zxid, makeZxid(epoch, 0), as its
// last processed one until the epoch's first transaction
// (Leader.lead sets it), while its followers, synced by a DIFF, still
// report the last transaction of the epoch before. Both hold the same
// state; only transactions are compared (restore.go).
func (t *wireTracker) sawZxid(z int64) {
	if uint32(z) == 0 {
		return
	}
	t.mu.Lock()
	if z > t.maxZxid {
		t.maxZxid = z
	}
	t.mu.Unlock()
}

// resumedElsewhere records a resume of the session that succeeded on a
// connection of zklock's own (restore.go): like any resume, it certifies
// its send time, and the timeout granted counts (timeout.go).
func (t *wireTracker) resumedElsewhere(granted time.Duration, sent time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.to.connected(granted, true, sent)
	if sent.After(t.quorumHeard) {
		t.quorumHeard = sent
	}
	t.to.certified(t.quorumHeard)
	t.notifyLocked()
}

// notifyLocked wakes whoever waits on changed; the caller holds t.mu.
func (t *wireTracker) notifyLocked() {
	if t.changed != nil {
		close(t.changed)
	}
	t.changed = make(chan struct{})
}

// changes returns the channel that is closed at the next change.
func (t *wireTracker) changes() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// reply: int32 xid, int64 zxid, int32 err, then the body; a create's body
// starts with the created path (int32 length, bytes).
func (c *trackedConn) reply(frame []byte, replied time.Time) {
	if len(frame) < 4 {
		return
	}
	req, ok := c.take(int32(binary.BigEndian.Uint32(frame[0:4])))
	if !ok {
		return
	}
	ok = len(frame) >= 16 && binary.BigEndian.Uint32(frame[12:16]) == 0
	// Certify before remembering this reply: a request never vouches for
	// itself (see quorum.go).
	var certified time.Time
	if ok && throughLeader(req.opcode) {
		certified = c.certified(req.sent)
	}
	if c.t.isStandalone() {
		certified = req.sent
	}
	c.remember(completion{sent: req.sent, replied: replied})
	c.sampled(req.sent, replied, req.queued)
	if ok {
		c.answeredAny = true
	}

	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	switch {
	case ok:
		c.t.refusals = 0
	case len(frame) >= 16 && int32(binary.BigEndian.Uint32(frame[12:16])) == codeSessionRequiresAuth:
		// The server closes the session of a client that has not
		// authenticated, and says so in this reply only; the request
		// that carried it may be the keepalive's, not the caller's.
		c.t.authRequired = true
	}
	if req.sent.After(c.t.lastHeard) {
		c.t.lastHeard = req.sent
	}
	if certified.After(c.t.quorumHeard) {
		c.t.quorumHeard = certified
		c.t.to.certified(certified)
		c.t.notifyLocked()
	}
	switch req.opcode {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
	default:
		return
	}
	if len(frame) < 20 || !ok {
		return // short, or an error reply
	}
	zxid := int64(binary.BigEndian.Uint64(frame[4:12]))
	n := int(int32(binary.BigEndian.Uint32(frame[16:20])))
	if n <= 0 || 20+n > len(frame) {
		return // a path longer than the kept head of the frame
	}
	if c.t.created == nil || len(c.t.created) >= maxCreated {
		c.t.created = map[string]int64{}
	}
	c.t.created[string(frame[20:20+n])] = zxid
}

// take removes and returns the oldest pending request with xid, and drops
// the older ones: the server answers in order, so they were lost.
func (c *trackedConn) take(xid int32) (request, bool) {
	for i, r := range c.pending {
		if r.xid == xid {
			c.pending = c.pending[i+1:]
			return r, true
		}
	}
	return request{}, false
}

func (c *trackedConn) pop() (request, bool) {
	if len(c.pending) == 0 {
		return request{}, false
	}
	r := c.pending[0]
	c.pending = c.pending[1:]
	return r, true
}

// quiet reports, while a request waits for its reply on the current
// connection after its handshake, since when the server has been quiet:
// the later of that request's send time and the last bytes the server
// sent; with the connection's round-trip estimate. Before the handshake,
// the handshake bound governs (see capped).
func (t *wireTracker) quiet() (since time.Time, rtt roundTrip, conn *trackedConn, ok bool) {
	t.mu.Lock()
	c := t.cur
	t.mu.Unlock()
	if c == nil {
		return time.Time{}, roundTrip{}, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.handshook || len(c.pending) == 0 {
		return time.Time{}, roundTrip{}, c, false
	}
	since = c.pending[0].sent
	if c.lastByte.After(since) {
		since = c.lastByte
	}
	return since, c.rtt, c, true
}

// createdZxid is the zxid of this session's create of path (as the server
// names it, chroot included), if the tracker saw it.
func (t *wireTracker) createdZxid(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	z, ok := t.created[path]
	return z, ok
}

// frameReader splits a byte stream into ZooKeeper frames (a 4-byte
// big-endian length, then that many bytes). It keeps only the first few
// bytes of each frame, which is all the tracker reads.
type frameReader struct {
	frames  int    // frames completed so far
	hdr     []byte // length prefix being assembled
	remain  int    // bytes of the current frame body still to come
	head    []byte // the first bytes of the current body
	inFrame bool
}

// headLen is how much of each frame body is kept: enough for the
// ConnectResponse's timeout and session id, a reply's header, and the path
// in a create's reply.
const headLen = 20 + 1024

func (r *frameReader) feed(b []byte, onFrame func(first bool, head []byte)) {
	for len(b) > 0 {
		if !r.inFrame {
			need := 4 - len(r.hdr)
			if need > len(b) {
				need = len(b)
			}
			r.hdr = append(r.hdr, b[:need]...)
			b = b[need:]
			if len(r.hdr) < 4 {
				return
			}
			r.remain = int(binary.BigEndian.Uint32(r.hdr))
			r.hdr = r.hdr[:0]
			r.head = r.head[:0]
			r.inFrame = true
		}
		take := r.remain
		if take > len(b) {
			take = len(b)
		}
		if keep := headLen - len(r.head); keep > 0 {
			if keep > take {
				keep = take
			}
			r.head = append(r.head, b[:keep]...)
		}
		b = b[take:]
		r.remain -= take
		if r.remain == 0 {
			r.inFrame = false
			onFrame(r.frames == 0, r.head)
			r.frames++
		}
	}
}

// snapshot returns the tracker's facts: the timeout granted on the
// latest connect, and when the server last answered.
func (t *wireTracker) snapshot() (granted time.Duration, lastHeard time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.to.granted, t.lastHeard
}

// contact returns what the tracker knows of the session's hold on the
// ensemble.
func (t *wireTracker) contact() Contact {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Contact{QuorumHeard: t.quorumHeard, Timeout: t.to.effective, Granted: t.to.granted, Pending: t.to.pending}
}

func (t *wireTracker) isStandalone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.standalone
}

// quorum is when the leader last certainly touched the session.
func (t *wireTracker) quorum() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.quorumHeard
}
