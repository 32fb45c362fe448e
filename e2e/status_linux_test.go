package e2e

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/ptytest"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// eraseLine is what the status line writes to go back and erase itself.
const eraseLine = "\r\x1b[K"

// TestStatusLineAtTerminal: a waiter at a terminal shows one status line:
// the path, its position, who holds the lock (user@host, pid, command) and
// for how long, how long it has waited and what is left of --timeout. The
// line follows a change of holder that is not the waiter's predecessor,
// is cut to the terminal's width, and is erased before the command writes
// anything.
func TestStatusLineAtTerminal(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	h1 := startHolder(t, path)
	h2 := zklock(t, "run", "--path", path, "--", "sh", "-c", "while :; do sleep 0.05; done")
	if err := h2.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		h2.Process.Signal(syscall.SIGTERM)
		h2.Wait()
	}()
	zktest.Eventually(t, 10*time.Second, "the second holder to queue", func() bool { return queueLen(conn, path) == 2 })

	tty, done := waitAtTerminal(t, "xterm", "run", "--timeout", "5m", "--path", path, "--", "echo", "COMMAND-OUTPUT")
	status := func(pos, pid int) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`zklock: waiting for %s, position %d, held by \S+@\S+ pid %d \(sh -c [^)]*\) for \d+s; waited \d+s, \d+m\d+s left`,
			regexp.QuoteMeta(path), pos, pid))
	}
	zktest.Eventually(t, 15*time.Second, "the status line naming the first holder", func() bool {
		return status(3, h1.Process.Pid).MatchString(tty.Output())
	})
	// Redrawn in place: each drawing starts by erasing the line, and no
	// line ends while it waits.
	if out := tty.Output(); strings.Contains(out, "\n") || !strings.HasPrefix(out, eraseLine) {
		t.Errorf("the status line is not redrawn in place: %q", out)
	}
	// The first holder leaves: the second (the waiter's predecessor, not
	// the one it watches) holds, and the line says so.
	h1.Process.Signal(syscall.SIGTERM)
	zktest.Eventually(t, 15*time.Second, "the status line naming the second holder", func() bool {
		return status(2, h2.Process.Pid).MatchString(tty.Output())
	})
	// A narrow terminal: the line is cut to fit, so it never wraps.
	tty.SetWidth(t, 40)
	zktest.Eventually(t, 10*time.Second, "a line cut to 39 columns", func() bool {
		out := tty.Output()
		last := out[strings.LastIndex(out, eraseLine)+len(eraseLine):]
		return strings.HasSuffix(last, "…") && len([]rune(last)) == 39
	})
	h2.Process.Signal(syscall.SIGTERM)
	if err := done(); err != nil {
		t.Fatalf("the waiter: %v", err)
	}
	out := tty.Output()
	i := strings.Index(out, "COMMAND-OUTPUT")
	if i < 0 || !strings.HasSuffix(out[:i], eraseLine) || strings.Contains(out[i:], "zklock:") {
		t.Errorf("the status line is not erased just before the command's output: %q", out)
	}
	assertGone(t, conn, path)
}

// TestStatusLineDumbTerminal: TERM=dumb cannot erase a line, so nothing is
// drawn. A second waiter behind it, at a terminal that can, shows its line
// once both wait: by then the first has had its turn to draw.
func TestStatusLineDumbTerminal(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	h := startHolder(t, path)
	dumb, dumbDone := waitAtTerminal(t, "dumb", "run", "--path", path, "--", "echo", "DUMB-OUTPUT")
	zktest.Eventually(t, 10*time.Second, "the first waiter to queue", func() bool { return queueLen(conn, path) == 2 })
	xterm, xtermDone := waitAtTerminal(t, "xterm", "run", "--path", path, "--", "true")
	zktest.Eventually(t, 15*time.Second, "the second waiter's status line", func() bool {
		return strings.Contains(xterm.Output(), "position 3, held by")
	})
	h.Process.Signal(syscall.SIGTERM)
	for _, done := range []func() error{dumbDone, xtermDone} {
		if err := done(); err != nil {
			t.Fatalf("a waiter: %v", err)
		}
	}
	if out := dumb.Output(); out != "DUMB-OUTPUT\r\n" {
		t.Errorf("TERM=dumb: terminal shows %q, want the command's output only", out)
	}
}

// TestProgressWithoutTerminal: without a terminal a waiter prints nothing
// (cron mails any output); --progress or ZKLOCK_PROGRESS=1 print one plain
// line when the wait begins and one whenever the position or holder
// changes.
func TestProgressWithoutTerminal(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	h := startHolder(t, path)
	var stderr [3]bytes.Buffer
	var done [3]chan error
	for i, extra := range [][]string{{"--progress"}, {}, {}} {
		c := zklock(t, append(append([]string{"run", "--path", path}, extra...), "--", "true")...)
		if i == 1 {
			c.Env = append(c.Env, "ZKLOCK_PROGRESS=1")
		}
		c.Stderr = &stderr[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done[i] = make(chan error, 1)
		go func() { done[i] <- c.Wait() }()
		defer func() {
			c.Process.Signal(syscall.SIGTERM)
			<-done[i]
		}()
		zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == i+2 })
	}
	h.Process.Signal(syscall.SIGTERM)
	for i := range done {
		if err := <-done[i]; err != nil {
			t.Fatalf("waiter %d: %v: %s", i, err, stderr[i].String())
		}
		done[i] <- nil // for the deferred cleanup
	}
	line := func(pos, pid int) string {
		return fmt.Sprintf(`^zklock: waiting for %s, position %d, held by \S+@\S+ pid %d \(sh -c [^)]*\) for \d+s; waited \d+s$`,
			regexp.QuoteMeta(path), pos, pid)
	}
	first := strings.Split(strings.TrimSpace(stderr[0].String()), "\n")
	if len(first) != 1 || !regexp.MustCompile(line(2, h.Process.Pid)).MatchString(first[0]) {
		t.Errorf("--progress printed %q", stderr[0].String())
	}
	second := strings.Split(strings.TrimSpace(stderr[1].String()), "\n")
	if !regexp.MustCompile(line(3, h.Process.Pid)).MatchString(second[0]) || strings.Contains(stderr[1].String(), "\r") {
		t.Errorf("ZKLOCK_PROGRESS=1 printed %q", stderr[1].String())
	}
	if stderr[2].Len() != 0 {
		t.Errorf("without a terminal or --progress, stderr has %q", stderr[2].String())
	}
	assertGone(t, conn, path)
}

// ansi matches a colour escape sequence.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColourFollowsStream: the table on stdout is coloured when stdout is a
// terminal, whatever stderr is, and stays aligned (escape codes take no
// width); zklock's messages on stderr are coloured when stderr is a
// terminal, whatever stdout is. NO_COLOR and TERM=dumb turn both off.
func TestColourFollowsStream(t *testing.T) {
	path := lockPath(t)
	startHolder(t, path)
	// run runs zklock with one stream on a terminal and the other in a
	// buffer, and returns what each received.
	run := func(ttyStream string, env []string, args ...string) (tty, buf string) {
		term, slave := ptytest.Open(t)
		c := zklock(t, args...)
		c.Env = append(c.Env, append([]string{"NO_COLOR=", "TERM=xterm"}, env...)...)
		var b bytes.Buffer
		if ttyStream == "stdout" {
			c.Stdout, c.Stderr = slave, &b
		} else {
			c.Stdout, c.Stderr = &b, slave
		}
		c.Run() // tryrun exits 75: the lock is held
		slave.Close()
		zktest.Eventually(t, 5*time.Second, "the terminal to show the output", func() bool { return strings.Contains(term.Output(), "\n") })
		return term.Output(), b.String()
	}
	table, stderr := run("stdout", nil, "holders", "--path", path)
	if !ansi.MatchString(table) || ansi.MatchString(stderr) {
		t.Errorf("holders with stdout at a terminal: table %q, stderr %q", table, stderr)
	}
	// Aligned: without its escape codes, the header's columns start where
	// the row's do.
	lines := strings.Split(strings.TrimSpace(ansi.ReplaceAllString(table, "")), "\r\n")
	if len(lines) != 2 || strings.Index(lines[0], "STATE") != strings.Index(lines[1], "holding") {
		t.Errorf("coloured table misaligned:\n%s", strings.Join(lines, "\n"))
	}
	msg, out := run("stderr", nil, "tryrun", "--path", path, "--", "true")
	if !strings.Contains(msg, "is busy") || !ansi.MatchString(msg) || ansi.MatchString(out) {
		t.Errorf("tryrun with stderr at a terminal: stderr %q, stdout %q", msg, out)
	}
	msg, _ = run("stderr", nil, "holders", "--path", "bad")
	if !ansi.MatchString(msg) {
		t.Errorf("an error at a terminal is not coloured: %q", msg)
	}
	for _, env := range []string{"NO_COLOR=1", "TERM=dumb"} {
		if table, _ := run("stdout", []string{env}, "holders", "--path", path); ansi.MatchString(table) {
			t.Errorf("%s: table %q", env, table)
		}
		if msg, _ := run("stderr", []string{env}, "tryrun", "--path", path, "--", "true"); ansi.MatchString(msg) {
			t.Errorf("%s: stderr %q", env, msg)
		}
	}
}
