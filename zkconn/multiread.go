package zkconn

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/jute"
)

// Many reads in one request.
//
// ZooKeeper 3.6 and later read a batch of getData and getChildren
// operations sent as one multiRead request (OpCode.multiRead, ZOOKEEPER-
// 3361) and answer them in one reply, each operation with its own result
// or error. A server spends most of its time for a small read on passing
// the request through its processor threads and writing the reply: a
// thousand getData in one request cost it what a few dozen cost one by
// one. `list` reads a tree of thousands of nodes this way.
//
// go-zookeeper has no multiRead. It has everything else a request needs on
// the session it keeps (the connection, the chroot-free paths, the xid,
// the pairing of the reply, the reconnects), in one unexported method,
// which connRequest borrows by name; the request and its reply are encoded
// and decoded here, by the types below, which the library's encoder and
// decoder hand over to. go.mod pins the library; TestMultiRead against a
// real server guards the borrowing when it moves.
//
// The wire format (the server's MultiOperationRecord and MultiResponse):
// the request is a sequence of (MultiHeader, operation) pairs ended by a
// MultiHeader with done set; a MultiHeader is an int32 type, a bool done
// and an int32 err, and an operation is a GetDataRequest or a
// GetChildrenRequest (a path and a watch flag). The reply is a sequence of
// (MultiHeader, result) pairs ended the same way: a GetDataResponse (data
// and Stat), a GetChildrenResponse (a vector of names), or, for a failed
// operation, a header of type -1 and an ErrorResponse (the code).

//go:linkname connRequest github.com/go-zookeeper/zk.(*Conn).request
func connRequest(c *zk.Conn, opcode int32, req, res any, recvFunc unsafe.Pointer) (int64, error)

// opMultiRead and opGetChildren are OpCode.multiRead and getChildren.
const (
	opMultiRead   int32 = 22
	opGetChildren int32 = 8
	opError       int32 = -1
)

// ErrMultiReadUnsupported means the server does not know multiRead (it is
// older than ZooKeeper 3.6): read one node at a time.
var ErrMultiReadUnsupported = errors.New("the server does not take many reads in one request (ZooKeeper < 3.6)")

// Read is one read of a MultiRead: a node's data and stat, or, with
// Children, the names of its children.
type Read struct {
	Path     string
	Children bool
}

// ReadResult is a Read's outcome: Err is the operation's own error (the
// node gone, no right to read it), like the one the single read returns.
type ReadResult struct {
	Data     []byte
	Stat     *zk.Stat
	Children []string
	Err      error
}

// MultiRead does reads in one request and returns their results in order.
// An error of its own (a lost connection, a server older than 3.6:
// ErrMultiReadUnsupported) means none was done.
func (c *Client) MultiRead(ctx context.Context, reads []Read) ([]ReadResult, error) {
	if len(reads) == 0 {
		return nil, nil
	}
	req := &multiReadRequest{reads: make([]Read, len(reads))}
	for i, r := range reads {
		req.reads[i] = Read{Path: c.abs(r.Path), Children: r.Children}
	}
	res := &multiReadResponse{}
	_, err := call(ctx, func() (struct{}, error) {
		_, err := connRequest(c.conn, opMultiRead, req, res, nil)
		return struct{}{}, err
	})
	switch {
	case err == nil && len(res.results) != len(reads):
		// A server that does not know the operation may answer it with
		// an empty reply.
		err = ErrMultiReadUnsupported
	case err != nil && !IsConnectionLoss(err) && !IsSessionLoss(err) && ctx.Err() == nil:
		// Or with an error of the whole request (UNIMPLEMENTED), or one
		// this reply's decoder cannot read.
		err = fmt.Errorf("%w: %w", ErrMultiReadUnsupported, err)
	}
	if err != nil {
		return nil, c.wrap(OpRead, reads[0].Path, err)
	}
	for i := range res.results {
		if e := res.results[i].Err; e != nil {
			res.results[i].Err = c.wrap(opName(reads[i]), reads[i].Path, e)
		}
	}
	return res.results, nil
}

func opName(r Read) string {
	if r.Children {
		return OpList
	}
	return OpRead
}

// multiReadRequest encodes a MultiOperationRecord of reads.
type multiReadRequest struct{ reads []Read }

func (r *multiReadRequest) Encode(b []byte) (int, error) {
	n := 0
	put32 := func(v int32) {
		binary.BigEndian.PutUint32(b[n:], uint32(v))
		n += 4
	}
	header := func(typ int32, done bool) {
		put32(typ)
		b[n] = 0
		if done {
			b[n] = 1
		}
		n++
		put32(-1)
	}
	for _, rd := range r.reads {
		if len(b)-n < 4+1+4+4+len(rd.Path)+1+9 {
			return n, zk.ErrShortBuffer
		}
		typ := jute.OpGetData
		if rd.Children {
			typ = opGetChildren
		}
		header(typ, false)
		put32(int32(len(rd.Path)))
		n += copy(b[n:], rd.Path)
		b[n] = 0 // no watch
		n++
	}
	header(-1, true)
	return n, nil
}

// multiReadResponse decodes a MultiResponse to reads.
type multiReadResponse struct{ results []ReadResult }

func (r *multiReadResponse) Decode(b []byte) (n int, err error) {
	defer func() {
		if recover() != nil { // a reply cut short
			err = zk.ErrShortBuffer
		}
	}()
	get32 := func() int32 {
		v := int32(binary.BigEndian.Uint32(b[n:]))
		n += 4
		return v
	}
	for {
		typ := get32()
		done := b[n] != 0
		n++
		get32() // the header's err: the result says it
		if done {
			return n, nil
		}
		var res ReadResult
		switch typ {
		case jute.OpGetData:
			if l := get32(); l >= 0 {
				res.Data = append([]byte(nil), b[n:n+int(l)]...)
				n += int(l)
			}
			res.Stat = &zk.Stat{}
			s := res.Stat
			s.Czxid, s.Mzxid, s.Ctime, s.Mtime = get64(b, &n), get64(b, &n), get64(b, &n), get64(b, &n)
			s.Version, s.Cversion, s.Aversion = get32(), get32(), get32()
			s.EphemeralOwner = get64(b, &n)
			s.DataLength, s.NumChildren = get32(), get32()
			s.Pzxid = get64(b, &n)
		case opGetChildren:
			count := get32()
			if count > 0 {
				res.Children = make([]string, count)
			}
			for i := range res.Children {
				l := int(get32())
				res.Children[i] = string(b[n : n+l])
				n += l
			}
		case opError:
			res.Err = codeError(get32())
		default:
			return n, fmt.Errorf("unexpected result of type %d in a multiRead reply", typ)
		}
		r.results = append(r.results, res)
	}
}

func get64(b []byte, n *int) int64 {
	v := int64(binary.BigEndian.Uint64(b[*n:]))
	*n += 8
	return v
}

// codeError is the error of a failed read's code (KeeperException.Code).
func codeError(code int32) error {
	switch code {
	case -101:
		return zk.ErrNoNode
	case -102:
		return zk.ErrNoAuth
	case -112:
		return zk.ErrSessionExpired
	}
	return fmt.Errorf("zookeeper error %d", code)
}
