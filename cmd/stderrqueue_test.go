package cmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// stuckWriter blocks every write until it is opened, as a pipe that
// nobody reads does, and then keeps what it is given.
type stuckWriter struct {
	open chan struct{}
	mu   sync.Mutex
	got  bytes.Buffer
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.Write(p)
}

func (w *stuckWriter) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.String()
}

// TestStderrQueueNeverBlocks: with a writer that blocks, the first write
// returns after its patience and the later ones at once, however many;
// what does not fit is dropped and counted; and once the writer takes
// lines again, everything queued comes out in order, then the drop is
// said, once. With a writer that keeps up, a write returns once written.
func TestStderrQueueNeverBlocks(t *testing.T) {
	w := &stuckWriter{open: make(chan struct{})}
	q := newStderrQueue(w, func(n int64) []byte { return []byte(fmt.Sprintf("dropped %d\n", n)) })
	line := strings.Repeat("x", 1023) + "\n"
	lines := queueMax/len(line) + 10
	start := time.Now()
	for range lines {
		q.Write([]byte(line))
	}
	took := time.Since(start)
	// The bound: half of what it takes if each write waited its
	// patience out, which leaves a late timer on a loaded machine room,
	// and what the writes themselves cost, measured apart on a writer
	// that keeps up (the same count of copies into the queue, each
	// waiting for its own write).
	fast := newStderrQueue(io.Discard, nil)
	start = time.Now()
	for range lines {
		fast.Write([]byte(line))
	}
	cost := time.Since(start)
	fast.flush(time.Minute)
	if bound := time.Duration(lines)*queuePatience/2 + 2*cost; took > bound {
		t.Errorf("%d writes to a stuck writer took %s, over %s: each waited its patience of %s (as many writes that were written took %s)", lines, took, bound, queuePatience, cost)
	}
	close(w.open)
	q.flush(time.Minute)
	got := w.text()
	written := queueMax / len(line)
	want := strings.Repeat(line, written) + fmt.Sprintf("dropped %d\n", lines-written)
	if got != want {
		t.Errorf("wrote %d bytes ending %q, want %d lines then the drop, once", len(got), got[max(0, len(got)-40):], written)
	}
}

// TestStderrQueueFlushIsBounded: at exit, a writer that never takes the
// last lines delays zklock by the flush's bound, not for ever.
func TestStderrQueueFlushIsBounded(t *testing.T) {
	w := &stuckWriter{open: make(chan struct{})}
	defer close(w.open) // the writer's goroutine ends once it may write
	q := newStderrQueue(w, func(int64) []byte { return nil })
	q.Write([]byte("last words\n"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.flush(50 * time.Millisecond)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("flush still waiting on a stuck writer after a minute")
	}
}

// TestStderrQueueFlushWritesTheLastLine: a line queued just before the
// flush (its write gave up waiting: the writer was not scheduled within
// its patience, as on a loaded host) is written before zklock exits. The
// writer once chose at random between the flush's stop and the line's
// wake-up, both ready at once, and about half the time ended without
// writing: zklock exited 64 with nothing on stderr.
func TestStderrQueueFlushWritesTheLastLine(t *testing.T) {
	for i := range 200 {
		var got zktest.SyncBuffer
		q := newStderrQueue(&got, func(int64) []byte { return nil })
		// Queue the line as a write that has given up waiting leaves it:
		// pending, with the writer woken but not yet run.
		q.mu.Lock()
		q.pending = append(q.pending, &queued{b: []byte("zklock: bad auth\n"), written: make(chan struct{})})
		q.mu.Unlock()
		q.wake <- struct{}{}
		q.flush(10 * time.Second)
		if text := got.String(); text != "zklock: bad auth\n" {
			t.Fatalf("flush %d: stderr %q, want the queued line", i, text)
		}
	}
}
