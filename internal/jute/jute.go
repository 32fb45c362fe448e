// Package jute holds the few facts of ZooKeeper's wire format that zklock
// reads for itself, below go-zookeeper: the frame around every message, and
// the opcodes of the requests it looks at. zkconn reads them to track what
// the ensemble has answered and to run SASL; the test proxy reads them to
// drop one chosen reply. One definition keeps the two in agreement.
package jute

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Request opcodes (ZooDefs.OpCode in the server's source).
const (
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpSetACL          int32 = 7
	OpSync            int32 = 9
	OpGetChildren2    int32 = 12
	OpMulti           int32 = 14
	OpCreate2         int32 = 15
	OpCreateContainer int32 = 19
	OpCreateTTL       int32 = 21
	OpSASL            int32 = 102
	OpCloseSession    int32 = -11
)

// HeaderLen is the length prefix in front of every frame: a 4-byte
// big-endian count of the bytes that follow.
const HeaderLen = 4

// FrameTooLargeError is a length prefix over the reader's bound. The bytes
// may not be a frame at all: a four-letter-word command read as a length is
// over a billion.
type FrameTooLargeError struct {
	Len int64
	Max int
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("frame of %d bytes (at most %d expected)", e.Len, e.Max)
}

// ReadFrame reads one frame from r and returns it with its length prefix.
// A prefix that is negative or larger than max returns the four prefix
// bytes and a *FrameTooLargeError, so that a caller that can fall back to
// raw bytes loses none. On any other error it returns what it read.
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var hdr [HeaderLen]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return hdr[:n], err
	}
	size := int64(int32(binary.BigEndian.Uint32(hdr[:])))
	if size < 0 || size > int64(max) {
		return hdr[:], &FrameTooLargeError{Len: size, Max: max}
	}
	frame := make([]byte, HeaderLen+int(size))
	copy(frame, hdr[:])
	n, err := io.ReadFull(r, frame[HeaderLen:])
	return frame[:HeaderLen+n], err
}
