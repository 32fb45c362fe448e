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
// Replies are paired with requests by xid (pings, auth and set-watches
// packets use fixed negative xids; those pair with the oldest request of the
// same xid). The server answers a connection's requests strictly in order,
// so a reply also settles every older request still waiting: any of those
// that got no reply was lost and never will. Watch notifications (xid -1)
// are not replies.
type wireTracker struct {
	mu         sync.Mutex
	negotiated time.Duration
	lastHeard  time.Time
	now        func() time.Time
	// created maps the paths of nodes this session created to the zxid of
	// their create, which is the node's czxid: the fencing token, without
	// the extra round trip of an exists call.
	created map[string]int64
}

// Opcodes whose successful reply carries the created path.
const (
	opCreate          = 1
	opCreate2         = 15
	opCreateContainer = 19
	opCreateTTL       = 21
)

// maxCreated bounds the created map; a run creates a handful of nodes.
const maxCreated = 64

// trackedConn is one TCP (or TLS) connection seen through a wireTracker.
type trackedConn struct {
	net.Conn
	t *wireTracker

	mu      sync.Mutex
	pending []request   // requests awaiting replies, in order
	out     frameReader // client → server
	in      frameReader // server → client
}

// request is what the tracker remembers of a request until its reply.
type request struct {
	sent   time.Time
	xid    int32
	opcode int32
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
		r := request{sent: sent}
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
		c.mu.Lock()
		c.in.feed(b[:n], func(first bool, frame []byte) {
			if first {
				c.connectResponse(frame)
				return
			}
			if len(frame) >= 4 && int32(binary.BigEndian.Uint32(frame)) == -1 {
				return // a watch notification, not a reply
			}
			c.reply(frame)
		})
		c.mu.Unlock()
	}
	return n, err
}

// connectResponse: int32 protocolVersion, int32 timeOut (ms), int64 sessionId, …
func (c *trackedConn) connectResponse(frame []byte) {
	req, ok := c.pop()
	if !ok || len(frame) < 16 {
		return
	}
	sent := req.sent
	timeout := time.Duration(int32(binary.BigEndian.Uint32(frame[4:8]))) * time.Millisecond
	session := int64(binary.BigEndian.Uint64(frame[8:16]))
	if session == 0 {
		return // the server refused to resume the session: it has expired
	}
	c.t.mu.Lock()
	c.t.negotiated = timeout
	if sent.After(c.t.lastHeard) {
		c.t.lastHeard = sent
	}
	c.t.mu.Unlock()
}

// reply: int32 xid, int64 zxid, int32 err, then the body; a create's body
// starts with the created path (int32 length, bytes).
func (c *trackedConn) reply(frame []byte) {
	if len(frame) < 4 {
		return
	}
	req, ok := c.take(int32(binary.BigEndian.Uint32(frame[0:4])))
	if !ok {
		return
	}
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if req.sent.After(c.t.lastHeard) {
		c.t.lastHeard = req.sent
	}
	switch req.opcode {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
	default:
		return
	}
	if len(frame) < 20 || binary.BigEndian.Uint32(frame[12:16]) != 0 {
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

// snapshot returns the tracker's facts.
func (t *wireTracker) snapshot() (negotiated time.Duration, lastHeard time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.negotiated, t.lastHeard
}
