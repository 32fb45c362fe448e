package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/testkit/ptytest"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// clearScreen is what a live view writes before each frame.
const clearScreen = "\x1b[H\x1b[2J"

// TestWatchAtTerminal: at a terminal, list --watch draws the table over
// the one before, under a line naming the path and the time of the last
// change, and Ctrl-C ends it with exit 0.
func TestWatchAtTerminal(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	c := zklock(t, "list", "--watch", "--path", path)
	// Its own session, with the terminal as its controlling terminal:
	// Ctrl-C reaches it as it reaches a command typed at a shell.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	tty, z := atTerminal(t, c, "xterm", 300, os.Kill)
	frames := func() []string {
		out := tty.Output()
		if !strings.HasPrefix(out, clearScreen) {
			return nil
		}
		return strings.Split(out, clearScreen)[1:]
	}
	header := regexp.MustCompile(`^watching ` + regexp.QuoteMeta(path) + ` and below; last change \d\d:\d\d:\d\d\r\n\r\n`)
	zktest.Eventually(t, 15*time.Second, "the first frame", func() bool {
		f := frames()
		return len(f) == 1 && header.MatchString(f[0]) && strings.Contains(f[0], "no locks held or awaited at or below "+path)
	})

	node := foreignNode(t, conn, path+"/"+curatorContender, []byte("a-client"))
	name := node[strings.LastIndex(node, "/")+1:]
	zktest.Eventually(t, 10*time.Second, "a second frame, with the contender", func() bool {
		f := frames()
		return len(f) == 2 && header.MatchString(f[1]) && strings.Contains(f[1], name) && strings.Contains(f[1], "holding")
	})
	if err := conn.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "a third frame, empty again", func() bool {
		f := frames()
		return len(f) == 3 && strings.Contains(f[2], "no locks held or awaited")
	})

	interrupt(t, tty, z)
	if f := frames(); len(f) != 3 {
		t.Errorf("%d frames, want 3 (one per change)", len(f))
	}
}

// TestWatchSmallTerminal: a queue of 201 on a terminal of 20 rows. Each
// frame fits the screen, as watch(1) and top fit theirs: the header and
// the holder, then the first waiters, then how many more; never a line
// more than the screen has, or one wider, so nothing scrolls into the
// terminal's scrollback. When the holder leaves, the next frame shows the
// next one holding.
func TestWatchSmallTerminal(t *testing.T) {
	const rows, cols, waiters = 20, 120, 200
	path := lockPath(t)
	conn := rawZK(t)
	createParents(t, conn, path+"/"+curatorContender)
	// One request makes the queue: it is there at once, however loaded.
	ops := []any{}
	for range waiters + 1 {
		ops = append(ops, &zk.CreateRequest{Path: path + "/" + curatorContender, Data: []byte("10.0.0.1"),
			Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagEphemeral | zk.FlagSequence})
	}
	res, err := conn.Multi(ops...)
	if err != nil {
		t.Fatal(err)
	}
	c := zklock(t, "list", "--watch", "--path", path)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	tty, z := atScreen(t, c, "xterm", rows, cols, os.Kill)
	frames := func() []string {
		out := tty.Output()
		if !strings.HasPrefix(out, clearScreen) {
			return nil
		}
		return strings.Split(out, clearScreen)[1:]
	}
	header := regexp.MustCompile(`^watching ` + regexp.QuoteMeta(path) + ` and below; last change \d\d:\d\d:\d\d\r\n\r\nPATH +POS +STATE`)
	// shown waits for a frame whose last line is more ("… and N more
	// waiting"), and checks that every frame fits the screen.
	shown := func(what, more string) {
		t.Helper()
		zktest.Eventually(t, 30*time.Second, what, func() bool {
			f := frames()
			return len(f) > 0 && strings.HasSuffix(f[len(f)-1], "\r\n"+more)
		})
		for i, f := range frames() {
			ls := strings.Split(f, "\r\n")
			if len(ls) > rows {
				t.Fatalf("frame %d has %d lines on a screen of %d: it scrolls", i, len(ls), rows)
			}
			for _, l := range ls {
				if n := utf8.RuneCountInString(l); n > cols {
					t.Fatalf("frame %d has a line %d wide on a screen of %d: it wraps: %q", i, n, cols, l)
				}
			}
			if !header.MatchString(f) {
				t.Fatalf("frame %d does not start with the header and the table's: %q", i, f)
			}
		}
		last := frames()[len(frames())-1]
		if h, w := strings.Count(last, " holding "), strings.Count(last, " waiting "); h != 1 || w != rows-5 {
			t.Errorf("%s: %d holding and %d waiting shown, want 1 and %d (the header, a blank, the table's header, the holder, the last line)",
				what, h, w, rows-5)
		}
	}
	shown("the first frame", fmt.Sprintf("… and %d more waiting", waiters-(rows-5)))
	if err := conn.Delete(res[0].String, -1); err != nil {
		t.Fatal(err)
	}
	shown("the frame after the holder left", fmt.Sprintf("… and %d more waiting", waiters-1-(rows-5)))

	interrupt(t, tty, z)
}

// interrupt types Ctrl-C at a watch's terminal, which must end it with
// exit status 0.
func interrupt(t *testing.T, tty *ptytest.PTY, z *started) {
	t.Helper()
	tty.Type(t, 0x03) // Ctrl-C
	select {
	case <-z.exited:
		if code := exitCodeOf(t, z.err); code != 0 {
			t.Errorf("after Ctrl-C: exit %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still watching 10s after Ctrl-C")
	}
}
