package zkconn

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// rawConn speaks just enough of ZooKeeper's protocol for two things
// go-zookeeper cannot do: resume this client's own session on a connection
// of zklock's (go-zookeeper keeps the session's password to itself, and
// resumes only on its own connection), and send a request on it. The
// probe of a refused resume (restore.go) and the retried release
// (release.go) use it. It goes through the same TLS and SASL as the
// session's own connections, and adds the same digest identity.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
	xid  int32
}

// Opcodes rawConn sends that jute does not name.
const (
	opAuth         int32 = 100
	opCloseSession int32 = -11
	xidAuth        int32 = -4
)

// maxRawFrame bounds a reply read by rawConn: its replies are headers, a
// sync's path or a stat.
const maxRawFrame = 1 << 20

// dialRaw connects to address as the session's own connections do, with
// every read and write bounded by ctx's deadline, and closes the
// connection when ctx ends.
func (c *Client) dialRaw(ctx context.Context, address string) (*rawConn, func(), error) {
	timeout := DefaultConnectTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	conn, err := c.connect("tcp", address, timeout)
	if err != nil {
		return nil, nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	done := func() {
		stop()
		conn.Close()
	}
	return &rawConn{conn: conn, r: bufio.NewReader(conn), xid: 1 << 20}, done, nil
}

// resume sends a ConnectRequest for session with password passwd, asking
// for timeout, and the last zxid given, and returns the timeout granted
// and whether the server accepted the session (a ConnectResponse with
// session 0 says it does not know it).
func (r *rawConn) resume(session int64, passwd []byte, lastZxid int64, timeout time.Duration) (time.Duration, bool, error) {
	// ConnectRequest: int32 protocolVersion, int64 lastZxidSeen, int32
	// timeOut, int64 sessionId, buffer passwd, bool readOnly.
	b := make([]byte, 4, 4+4+8+4+8+4+len(passwd)+1)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(lastZxid))
	b = binary.BigEndian.AppendUint32(b, uint32(timeout.Milliseconds()))
	b = binary.BigEndian.AppendUint64(b, uint64(session))
	b = appendBuffer(b, passwd)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := r.conn.Write(b); err != nil {
		return 0, false, err
	}
	frame, err := jute.ReadFrame(r.r, maxRawFrame)
	if err != nil {
		return 0, false, err
	}
	// ConnectResponse: int32 protocolVersion, int32 timeOut, int64
	// sessionId, …
	body := frame[jute.HeaderLen:]
	if len(body) < 16 {
		return 0, false, errors.New("short ConnectResponse")
	}
	granted := time.Duration(int32(binary.BigEndian.Uint32(body[4:8]))) * time.Millisecond
	return granted, int64(binary.BigEndian.Uint64(body[8:16])) != 0, nil
}

// addAuth sends a digest (or other non-x509) identity, as Dial does on
// the session's own connections.
func (r *rawConn) addAuth(a *Auth) error {
	if a == nil || a.Scheme == SchemeX509 {
		return nil
	}
	// AuthPacket: int32 type, ustring scheme, buffer auth.
	body := binary.BigEndian.AppendUint32(nil, 0)
	body = appendBuffer(body, []byte(a.Scheme))
	body = appendBuffer(body, []byte(a.Credentials))
	_, code, _, err := r.call(xidAuth, opAuth, body)
	if err == nil && code != 0 {
		err = fmt.Errorf("auth as %q refused (code %d)", a.User(), code)
	}
	return err
}

// request sends one request and returns its reply's zxid, error code
// and body.
func (r *rawConn) request(op int32, body []byte) (zxid int64, code int32, reply []byte, err error) {
	r.xid++
	return r.call(r.xid, op, body)
}

func (r *rawConn) call(xid, op int32, body []byte) (zxid int64, code int32, reply []byte, err error) {
	b := make([]byte, 4, 12+len(body))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := r.conn.Write(b); err != nil {
		return 0, 0, nil, err
	}
	for {
		frame, err := jute.ReadFrame(r.r, maxRawFrame)
		if err != nil {
			return 0, 0, nil, err
		}
		// ReplyHeader: int32 xid, int64 zxid, int32 err.
		h := frame[jute.HeaderLen:]
		if len(h) < 16 {
			return 0, 0, nil, errors.New("short reply")
		}
		if int32(binary.BigEndian.Uint32(h[0:4])) != xid {
			continue // a notification, or a reply to something older
		}
		return int64(binary.BigEndian.Uint64(h[4:12])), int32(binary.BigEndian.Uint32(h[12:16])), h[16:], nil
	}
}

// appendBuffer appends a jute buffer (or ustring): an int32 length, then
// the bytes.
func appendBuffer(b, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// pathBody is the body of a request that names one path (a sync's).
func pathBody(p string) []byte { return appendBuffer(nil, []byte(p)) }
