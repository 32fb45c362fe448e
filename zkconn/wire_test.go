package zkconn

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
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
	in bytes.Buffer
}

func (f *fakeConn) Write(b []byte) (int, error) { return len(b), nil }
func (f *fakeConn) Read(b []byte) (int, error)  { return f.in.Read(b) }

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
	fc := &fakeConn{}
	c := tr.wrap(fc)
	connectResp := make([]byte, 20)
	binary.BigEndian.PutUint32(connectResp[4:], 4000)
	binary.BigEndian.PutUint64(connectResp[8:], 0x1234)

	c.Write(frame(make([]byte, 40)...)) // ConnectRequest at t=1000
	fc.in.Write(frame(connectResp...))
	c.Read(make([]byte, 4096))
	if tr.negotiated != 4*time.Second {
		t.Fatalf("negotiated %s", tr.negotiated)
	}

	now = time.Unix(1001, 0)
	c.Write(req(1, 3)) // lost: never answered
	now = time.Unix(1002, 0)
	c.Write(req(-2, 11)) // ping
	now = time.Unix(1003, 0)
	c.Write(req(2, opCreate))
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
