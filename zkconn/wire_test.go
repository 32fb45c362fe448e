package zkconn

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

func frame(body ...byte) []byte {
	b := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	return append(b, body...)
}

// TestFrameReaderSplits feeds frames byte by byte and in one piece: the
// frame boundaries found must be the same.
func TestFrameReaderSplits(t *testing.T) {
	var stream []byte
	stream = append(stream, frame(1, 2, 3)...)
	stream = append(stream, frame()...)
	big := make([]byte, headLen+100)
	big[0] = 0xff
	stream = append(stream, frame(big...)...)
	for _, chunk := range []int{1, 3, 7, len(stream)} {
		var r frameReader
		var heads [][]byte
		firsts := 0
		for i := 0; i < len(stream); i += chunk {
			end := min(i+chunk, len(stream))
			r.feed(stream[i:end], func(first bool, head []byte) {
				if first {
					firsts++
				}
				heads = append(heads, append([]byte(nil), head...))
			})
		}
		if len(heads) != 3 || firsts != 1 || len(heads[0]) != 3 || len(heads[1]) != 0 ||
			len(heads[2]) != headLen || heads[2][0] != 0xff {
			t.Errorf("chunk %d: heads %v, firsts %d", chunk, heads, firsts)
		}
	}
}

// fakeConn discards writes and serves reads from a buffer.
type fakeConn struct {
	net.Conn
	in          bytes.Buffer
	read, write time.Time
}

func (f *fakeConn) Write(b []byte) (int, error) { return len(b), nil }
func (f *fakeConn) Read(b []byte) (int, error)  { return f.in.Read(b) }
func (f *fakeConn) Close() error                { return nil }

// The deadlines the tracker passes down, for the handshake test.
func (f *fakeConn) SetDeadline(d time.Time) error      { f.read, f.write = d, d; return nil }
func (f *fakeConn) SetReadDeadline(d time.Time) error  { f.read = d; return nil }
func (f *fakeConn) SetWriteDeadline(d time.Time) error { f.write = d; return nil }

func req(xid, op int32) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b[0:], uint32(xid))
	binary.BigEndian.PutUint32(b[4:], uint32(op))
	return frame(b...)
}

func rep(xid int32, zxid int64, body ...byte) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b[0:], uint32(xid))
	binary.BigEndian.PutUint64(b[4:], uint64(zxid))
	return frame(append(b, body...)...)
}

// TestTrackerPairsByXid: a request whose reply never comes (lost with its
// connection's bytes) does not shift the pairing of later replies, and a
// create's reply yields the created node's zxid.
func TestTrackerPairsByXid(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }}
	fc, c := connected(tr) // the ConnectRequest at t=1000
	if tr.to.granted != 4*time.Second || tr.to.effective != 4*time.Second {
		t.Fatalf("timeouts %+v", tr.to)
	}

	now = time.Unix(1001, 0)
	c.Write(req(1, 3)) // lost: never answered
	now = time.Unix(1002, 0)
	c.Write(req(-2, 11)) // ping
	now = time.Unix(1003, 0)
	c.Write(req(2, jute.OpCreate))
	path := []byte("/a/n-0000000001")
	body := binary.BigEndian.AppendUint32(nil, uint32(len(path)))
	fc.in.Write(rep(-2, 0))
	fc.in.Write(rep(-1, 0)) // a watch notification: not a reply
	fc.in.Write(rep(2, 77, append(body, path...)...))
	c.Read(make([]byte, 4096))
	_, last := tr.snapshot()
	if !last.Equal(time.Unix(1003, 0)) {
		t.Errorf("last heard %v, want the create's send time", last)
	}
	if z, ok := tr.createdZxid("/a/n-0000000001"); !ok || z != 77 {
		t.Errorf("created zxid %d, %v", z, ok)
	}
	if n := len(c.(*trackedConn).pending); n != 0 {
		t.Errorf("%d requests still pending; the lost one should be dropped", n)
	}
}

// errRep is a reply carrying a ZooKeeper error code.
func errRep(xid int32, code int32) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b[0:], uint32(xid))
	binary.BigEndian.PutUint32(b[12:], uint32(code))
	return frame(b...)
}

// handshake sends a ConnectRequest on c and feeds it a ConnectResponse
// for session 0x1234 with a negotiated timeout of 4s.
func handshake(c net.Conn, fc *fakeConn) { handshakeAs(c, fc, 0, 4*time.Second) }

// handshakeAs sends a ConnectRequest for session (0: a new one) and feeds
// it a ConnectResponse granting session 0x1234 the timeout granted.
func handshakeAs(c net.Conn, fc *fakeConn, session int64, granted time.Duration) {
	connReq := make([]byte, 40)
	binary.BigEndian.PutUint64(connReq[16:], uint64(session))
	c.Write(frame(connReq...))
	resp := make([]byte, 20)
	binary.BigEndian.PutUint32(resp[4:], uint32(granted.Milliseconds()))
	binary.BigEndian.PutUint64(resp[8:], 0x1234)
	fc.in.Write(frame(resp...))
	c.Read(make([]byte, 4096))
}

// connected wraps a fake connection and completes a handshake sent at
// the tracker's now.
func connected(tr *wireTracker) (*fakeConn, net.Conn) {
	fc := &fakeConn{}
	c := tr.wrap(fc, "s", 0)
	handshake(c, fc)
	return fc, c
}

// TestQuorumCertification follows the rules of quorum.go step by step,
// with T = 4s, so a sync certifies requests answered 1s before it was sent.
func TestQuorumCertification(t *testing.T) {
	base := time.Unix(1000, 0)
	now := base
	at := func(ms int) { now = base.Add(time.Duration(ms) * time.Millisecond) }
	tr := &wireTracker{now: func() time.Time { return now }}
	fc, c := connected(tr)
	if q := tr.quorum(); !q.Equal(base) {
		t.Fatalf("after the handshake quorum %v, want its send time", q)
	}
	exchange := func(sendMs, replyMs int, xid, op int32, reply []byte) {
		at(sendMs)
		c.Write(req(xid, op))
		at(replyMs)
		fc.in.Write(reply)
		c.Read(make([]byte, 4096))
	}
	want := func(what string, ms int) {
		t.Helper()
		if q, w := tr.quorum(), base.Add(time.Duration(ms)*time.Millisecond); !q.Equal(w) {
			t.Errorf("%s: quorum heard at +%v, want +%dms", what, q.Sub(base), ms)
		}
	}
	// Pings and reads prove nothing, however fresh.
	exchange(1000, 1010, -2, 11, rep(-2, 0))
	exchange(1500, 1510, 1, 3, rep(1, 0))
	want("ping and exists", 0)
	// A sync certifies only requests answered T/4 before it was sent.
	exchange(1800, 1810, 2, jute.OpSync, rep(2, 0))
	want("sync 0.8s after the ping", 0)
	exchange(2600, 2610, 3, jute.OpSync, rep(3, 0))
	want("sync 1.1s after the exists", 1500)
	exchange(3000, 3010, 4, jute.OpSync, rep(4, 0))
	want("sync 1.2s after the first sync", 1800)
	// A failed sync certifies nothing, and a sync never vouches for
	// itself: the next one must come T/4 after its reply.
	exchange(4000, 4010, 5, jute.OpSync, errRep(5, -112))
	want("a sync that failed", 1800)
	exchange(4020, 4030, 6, jute.OpSetData, rep(6, 9))
	want("a write right after", 3000)
	// The negotiated timeout never came: nothing is certified.
	tr2 := &wireTracker{now: func() time.Time { return now }}
	c2 := tr2.wrap(&fakeConn{}, "s", 0)
	c2.Write(req(1, jute.OpSync))
	if !tr2.quorum().IsZero() {
		t.Errorf("quorum heard before any session: %v", tr2.quorum())
	}
}

// TestHandshakeDeadline: until the ConnectResponse arrives, the deadlines
// go-zookeeper sets (or clears) are capped at dial time plus the limit;
// afterwards they pass through.
func TestHandshakeDeadline(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }, handshake: time.Second}
	fc := &fakeConn{}
	c := tr.wrap(fc, "s", 0)
	c.SetReadDeadline(now.Add(time.Hour))
	if want := now.Add(time.Second); !fc.read.Equal(want) {
		t.Errorf("read deadline %v during the handshake, want %v", fc.read, want)
	}
	c.SetReadDeadline(time.Time{})
	if want := now.Add(time.Second); !fc.read.Equal(want) {
		t.Errorf("a cleared deadline during the handshake is %v, want %v", fc.read, want)
	}
	c.SetWriteDeadline(now.Add(time.Hour))
	if want := now.Add(time.Second); !fc.write.Equal(want) {
		t.Errorf("write deadline %v during the handshake, want %v", fc.write, want)
	}
	handshake(c, fc)
	if !fc.read.IsZero() {
		t.Errorf("after the handshake the capped deadline is still set: %v", fc.read)
	}
	c.SetReadDeadline(now.Add(time.Hour))
	if want := now.Add(time.Hour); !fc.read.Equal(want) {
		t.Errorf("read deadline %v after the handshake, want %v", fc.read, want)
	}
}
