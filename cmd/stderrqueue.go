package cmd

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// stderrQueue is stderr for a run: what zklock says about a run must
// never delay the run. A pipe that nobody reads fills up, and a write to
// it then blocks for as long as nobody reads: written directly, the
// acquired event kept the command from starting while the lock was held,
// and other jobs were refused for it. So every write goes to a bounded
// queue that a goroutine of the queue's own writes out, in order.
//
// A write waits for its line to be written, for at most queuePatience:
// while the reader keeps up, zklock's lines and the command's, which
// shares the stream, come in the order they were made. Once a line has
// waited that long, later ones do not wait at all until the queue is
// empty again, so a run is delayed by one patience at most, however many
// lines it says. When the queue holds queueMax bytes, further lines are
// dropped and counted, and once the queue gets through again it says so,
// once, in the stream's own format.
type stderrQueue struct {
	w      io.Writer
	notice func(dropped int64) []byte // the line that says lines were dropped

	mu        sync.Mutex
	pending   []*queued
	size      int  // bytes pending
	congested bool // a line waited its patience out: later ones do not wait
	dropped   int64
	told      bool          // the drop was said
	wake      chan struct{} // a line was queued (buffered: one wake-up)
	stop      chan struct{} // closed by close: the writer ends
	done      chan struct{} // closed when the writer ends
}

type queued struct {
	b       []byte
	written chan struct{} // closed once b is written (or failed to be)
}

const (
	queuePatience = 20 * time.Millisecond
	queueMax      = 256 << 10
)

func newStderrQueue(w io.Writer, notice func(int64) []byte) *stderrQueue {
	q := &stderrQueue{w: w, notice: notice, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

// Write queues p, and waits for it as the type's comment says. It never
// fails: a line that cannot be written is a line dropped.
func (q *stderrQueue) Write(p []byte) (int, error) {
	q.mu.Lock()
	if q.size+len(p) > queueMax {
		q.dropped++
		q.mu.Unlock()
		return len(p), nil
	}
	item := &queued{b: append([]byte(nil), p...), written: make(chan struct{})}
	q.pending = append(q.pending, item)
	q.size += len(p)
	congested := q.congested
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	if congested {
		return len(p), nil
	}
	t := time.NewTimer(queuePatience)
	defer t.Stop()
	select {
	case <-item.written:
	case <-t.C:
		q.mu.Lock()
		q.congested = true
		q.mu.Unlock()
	}
	return len(p), nil
}

// run writes the queue out until flush stops it, and then writes what is
// left before it ends. A select with the stop and a wake-up both ready
// picks either at random: ending at once on the stop lost the lines
// queued just before it, zklock's last words (the error that says why it
// exits) among them, whenever the writer had not run within a write's
// patience.
func (q *stderrQueue) run() {
	defer close(q.done)
	for {
		stopping := false
		select {
		case <-q.stop:
			stopping = true
		case <-q.wake:
		}
		q.drain()
		if stopping {
			return
		}
	}
}

// drain writes out every line pending, then says the drop, if any.
func (q *stderrQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.congested = false
			say := q.dropped > 0 && !q.told
			q.told = q.told || say
			n := q.dropped
			q.mu.Unlock()
			if say {
				q.w.Write(q.notice(n))
			}
			return
		}
		item := q.pending[0]
		q.pending = q.pending[1:]
		q.mu.Unlock()
		q.w.Write(item.b) // an error is a line lost: there is no one else to tell
		q.mu.Lock()
		q.size -= len(item.b)
		q.mu.Unlock()
		close(item.written)
	}
}

// flush waits for what is queued to be written, for at most d, and ends
// the writer. zklock is about to exit: its last lines are worth a wait,
// but not a hang on a pipe nobody reads. A writer stuck in a write to
// such a pipe ends with the process.
func (q *stderrQueue) flush(d time.Duration) {
	mark := &queued{written: make(chan struct{})}
	q.mu.Lock()
	q.pending = append(q.pending, mark)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	close(q.stop) // the writer ends once the mark is written
	select {
	case <-mark.written:
		<-q.done
	case <-t.C:
	}
}

// exitWait bounds how long zklock waits at its exit for its last lines to
// reach a stderr that is slow to read.
const exitWait = 2 * time.Second

// queueStderr puts stderr behind a stderrQueue, for a run or tryrun,
// before it says anything: its lines, its settings under -v and its
// events under JSON included, then never hold it up. The drop notice is
// in the format stderr has when it is said (setFormat).
func (u *ui) queueStderr() {
	if u.queue != nil {
		return
	}
	u.notice.Store(&noticeStyle{prefix: u.warnPfx})
	q := newStderrQueue(u.err, u.droppedNotice)
	u.err, u.queue = q, q
	if u.json != nil {
		u.json = newJSONLog(q, os.Getenv)
		u.notice.Store(&noticeStyle{json: true, path: u.path})
	}
}

// noticeStyle is how the drop notice is written: it is written from the
// queue's goroutine, so the ui's fields are copied for it.
type noticeStyle struct {
	json         bool
	path, prefix string
}

// droppedNotice is the line that says n lines were dropped.
func (u *ui) droppedNotice(n int64) []byte {
	st := u.notice.Load()
	msg := fmt.Sprintf("%d lines for stderr were dropped: nobody read it in time, and a run never waits for its reader", n)
	if !st.json {
		return []byte(st.prefix + msg + "\n")
	}
	var b bytes.Buffer
	newJSONLog(&b, os.Getenv).line(slog.LevelWarn, "warning", msg, st.path)
	return b.Bytes()
}

// flushStderr writes out what is queued for stderr, if it is queued,
// before zklock exits.
func (u *ui) flushStderr() {
	if u.queue != nil {
		u.queue.flush(exitWait)
	}
}
