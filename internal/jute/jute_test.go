package jute

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestReadFrame(t *testing.T) {
	stream := []byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 1, 'd', 'r', 'u', 'o', 'k', 0, 0, 0, 9, 'x'}
	r := bytes.NewReader(stream)
	if f, err := ReadFrame(r, 64); err != nil || string(f) != "\x00\x00\x00\x03abc" {
		t.Fatalf("first frame %q, %v", f, err)
	}
	if f, err := ReadFrame(r, 64); err != nil || string(f) != "\x00\x00\x00\x01d" {
		t.Fatalf("second frame %q, %v", f, err)
	}
	f, err := ReadFrame(r, 64)
	var big *FrameTooLargeError
	if !errors.As(err, &big) || string(f) != "ruok" {
		t.Fatalf("a four-letter word: %q, %v; want its 4 bytes and FrameTooLargeError", f, err)
	}
	f, err = ReadFrame(r, 64)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(f) != 5 {
		t.Fatalf("a cut frame: %q, %v; want the 5 bytes read and ErrUnexpectedEOF", f, err)
	}
	if f, err := ReadFrame(r, 64); err != io.EOF || len(f) != 0 {
		t.Fatalf("at the end: %q, %v", f, err)
	}
}
