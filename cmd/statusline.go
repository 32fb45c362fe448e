package cmd

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/view"
	"golang.org/x/sys/unix"
)

// envProgress asks for --progress from the environment (CI logs).
const envProgress = "ZKLOCK_PROGRESS"

// statusTick is how often the status line is redrawn: the times in it
// count seconds.
const statusTick = time.Second

// eraseLine returns to the start of the line and erases it.
const eraseLine = "\r\x1b[K"

// statusLine says how a wait goes, on stderr. At a terminal it is one line
// redrawn in place, cleared before any other message and before the
// command starts. Elsewhere (plain) it prints one line when the wait
// begins and whenever the position or the holder changes: cron mails any
// output, so it is only used when asked for.
type statusLine struct {
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

// newStatusLine returns the status line for stderr, or nil when there is
// to be none: a terminal (not TERM=dumb, which cannot erase a line) gets
// the redrawn line; otherwise only asked (--progress) gets plain lines.
func newStatusLine(errw io.Writer, asked bool, getenv func(string) string) *statusLine {
	s := &statusLine{w: errw, now: time.Now, width: func() int { return terminalWidth(errw) }}
	switch {
	case canDraw(errw, getenv):
	case asked:
		s.plain = true
	default:
		return nil
	}
	return s
}

// Waiting shows where the wait stands.
func (s *statusLine) Waiting(st runner.WaitStatus) {
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
func (s *statusLine) redraw(stop <-chan struct{}, done chan<- struct{}) {
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
func (s *statusLine) Done() {
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

// around clears the line for a message, which say writes; the next redraw
// puts the line back under it.
func (s *statusLine) around(say func()) {
	if s == nil {
		say()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	say()
}

func (s *statusLine) clear() {
	if s.drawn {
		io.WriteString(s.w, eraseLine)
		s.drawn = false
	}
}

// draw puts the line on the terminal, cut to its width: a line that wraps
// could not be erased.
func (s *statusLine) draw() {
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
func (s *statusLine) text(st runner.WaitStatus) string {
	now := s.now()
	var b strings.Builder
	fmt.Fprintf(&b, "waiting for %s, position %d", view.Escape(st.Path), st.Position)
	if h := st.Holder; h != nil {
		fmt.Fprintf(&b, ", held by %s", view.Escape(view.Who(h.Contender, h.NodeData)))
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

// terminalWidth is w's width in columns, 80 if it cannot be told.
func terminalWidth(w io.Writer) int {
	if s := terminalSize(w); s.Cols > 0 {
		return s.Cols
	}
	return 80
}

// terminalSize is the size of the terminal w writes to, zero if it cannot
// be told.
func terminalSize(w io.Writer) view.Screen {
	if f, ok := fileOf(w); ok {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil {
			return view.Screen{Rows: int(ws.Row), Cols: int(ws.Col)}
		}
	}
	return view.Screen{}
}
