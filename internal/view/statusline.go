package view

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/runner"
)

// statusTick is how often the status line is redrawn: the times in it
// count seconds.
const statusTick = time.Second

// eraseLine returns to the start of the line and erases it.
const eraseLine = "\r\x1b[K"

// StatusLine says how a wait goes, on stderr. At a terminal it is one line
// redrawn in place, cleared before any other message and before the
// command starts. Elsewhere (plain) it prints one line when the wait
// begins and whenever the position or the holder changes: cron mails any
// output, so it is only used when asked for.
type StatusLine struct {
	w     io.Writer
	plain bool
	width func() int
	now   func() time.Time

	mu      sync.Mutex
	cur     *runner.WaitStatus
	drawn   bool   // a line is on the terminal
	printed string // plain: what the last line said of position and holder
	stop    chan struct{}
	done    chan struct{} // the redraw goroutine has ended
}

// NewStatusLine returns the status line for errw, or nil when there is
// to be none: a terminal that can erase a line (draw) gets the redrawn
// line, cut to width's columns; otherwise only asked (--progress) gets
// plain lines.
func NewStatusLine(errw io.Writer, draw, asked bool, width func() int) *StatusLine {
	s := &StatusLine{w: errw, now: time.Now, width: width}
	switch {
	case draw:
	case asked:
		s.plain = true
	default:
		return nil
	}
	return s
}

// Waiting shows where the wait stands.
func (s *StatusLine) Waiting(st runner.WaitStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = &st
	if s.plain {
		key := fmt.Sprintf("%s %d %s", st.Path, st.Position, holderName(st))
		if key != s.printed {
			s.printed = key
			fmt.Fprintln(s.w, "zklock: "+s.text(st))
		}
		return
	}
	s.draw()
	if s.stop == nil {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.redraw(s.stop, s.done)
	}
}

// redraw keeps the times current until stop is closed (by Done).
func (s *StatusLine) redraw(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(statusTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.mu.Lock()
			s.draw()
			s.mu.Unlock()
		}
	}
}

// Done ends the redraws and clears the line.
func (s *StatusLine) Done() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = nil
	s.clear()
}

// Around clears the line for a message, which say writes; the next redraw
// puts the line back under it.
func (s *StatusLine) Around(say func()) {
	if s == nil {
		say()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	say()
}

func (s *StatusLine) clear() {
	if s.drawn {
		io.WriteString(s.w, eraseLine)
		s.drawn = false
	}
}

// draw puts the line on the terminal, cut to its width: a line that wraps
// could not be erased.
func (s *StatusLine) draw() {
	if s.cur == nil || s.plain {
		return
	}
	line := "zklock: " + s.text(*s.cur)
	if w := s.width() - 1; w > 0 && utf8.RuneCountInString(line) > w {
		line = string([]rune(line)[:max(w-1, 0)]) + "…"
	}
	io.WriteString(s.w, eraseLine+line)
	s.drawn = true
}

// text says where the wait stands: the path and position, who holds the
// lock and for how long, how long this process has waited, and what is
// left of --timeout.
func (s *StatusLine) text(st runner.WaitStatus) string {
	now := s.now()
	var b strings.Builder
	fmt.Fprintf(&b, "waiting for %s, position %d", Escape(st.Path), st.Position)
	if h := st.Holder; h != nil {
		fmt.Fprintf(&b, ", held by %s", Escape(Who(h.Contender, h.NodeData)))
		if !h.HeldSince.IsZero() {
			fmt.Fprintf(&b, " for %s", seconds(now.Sub(h.HeldSince)))
		}
	}
	fmt.Fprintf(&b, "; waited %s", seconds(now.Sub(st.Since)))
	if d, ok := st.Deadline(); ok {
		fmt.Fprintf(&b, ", %s left", seconds(d.Sub(now)))
	}
	return b.String()
}

func holderName(st runner.WaitStatus) string {
	if st.Holder == nil {
		return ""
	}
	return st.Holder.Name
}

// seconds shows a duration to the second, never below zero.
func seconds(d time.Duration) string {
	return max(d, 0).Round(time.Second).String()
}
