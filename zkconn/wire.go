package zkconn

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// wireTracker watches the bytes go-zookeeper exchanges with the server to
// learn two facts the library keeps to itself:
//
//   - the negotiated session timeout, from the ConnectResponse (the server
//     clamps the requested timeout to its own bounds, and that clamped value
//     is the one that decides when the session expires);
//   - when the server last certainly heard from this session: the send time
//     of the last request that got a reply. A reply proves the server read
//     the request, so the server's expiry clock was reset no earlier than
//     that send time. The time of the reply, or of a disconnect event, says
//     nothing about when the server last heard from us.
//
// The server answers requests on a connection strictly in order, so replies
// are paired with requests first-in, first-out. Pings and auth packets are
// requests like any other; watch notifications (xid -1) are not replies.
type wireTracker struct {
	mu            sync.Mutex
	negotiated    time.Duration
	serverSession int64
	lastHeard     time.Time
	onNegotiated  func(time.Duration)
	now           func() time.Time
}

// trackedConn is one TCP (or TLS) connection seen through a wireTracker.
type trackedConn struct {
	net.Conn
	t *wireTracker

	mu      sync.Mutex
	pending []time.Time // send times of requests awaiting replies, in order
	out     frameReader // client → server
	in      frameReader // server → client
}

// wrap returns conn instrumented by t.
func (t *wireTracker) wrap(conn net.Conn) net.Conn {
	return &trackedConn{Conn: conn, t: t}
}

func (c *trackedConn) Write(b []byte) (int, error) {
	sent := c.t.now()
	c.mu.Lock()
	c.out.feed(b, func(first bool, frame []byte) {
		// Every frame the client sends expects exactly one reply: the
		// ConnectRequest a ConnectResponse, every other request a reply
		// with the same xid.
		c.pending = append(c.pending, sent)
	})
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.in.feed(b[:n], func(first bool, frame []byte) {
			if first {
				c.connectResponse(frame)
				return
			}
			if len(frame) >= 4 && int32(binary.BigEndian.Uint32(frame)) == -1 {
				return // a watch notification, not a reply
			}
			c.reply()
		})
		c.mu.Unlock()
	}
	return n, err
}

// connectResponse: int32 protocolVersion, int32 timeOut (ms), int64 sessionId, …
func (c *trackedConn) connectResponse(frame []byte) {
	sent, ok := c.pop()
	if !ok || len(frame) < 16 {
		return
	}
	timeout := time.Duration(int32(binary.BigEndian.Uint32(frame[4:8]))) * time.Millisecond
	session := int64(binary.BigEndian.Uint64(frame[8:16]))
	if session == 0 {
		return // the server refused to resume the session: it has expired
	}
	c.t.mu.Lock()
	c.t.negotiated = timeout
	c.t.serverSession = session
	if sent.After(c.t.lastHeard) {
		c.t.lastHeard = sent
	}
	cb := c.t.onNegotiated
	c.t.mu.Unlock()
	if cb != nil {
		cb(timeout)
	}
}

func (c *trackedConn) reply() {
	sent, ok := c.pop()
	if !ok {
		return
	}
	c.t.mu.Lock()
	if sent.After(c.t.lastHeard) {
		c.t.lastHeard = sent
	}
	c.t.mu.Unlock()
}

func (c *trackedConn) pop() (time.Time, bool) {
	if len(c.pending) == 0 {
		return time.Time{}, false
	}
	t := c.pending[0]
	c.pending = c.pending[1:]
	return t, true
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
// ConnectResponse's timeout and session id, and for a reply's xid.
const headLen = 16

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

// snapshot returns the tracker's facts.
func (t *wireTracker) snapshot() (negotiated time.Duration, lastHeard time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.negotiated, t.lastHeard
}
