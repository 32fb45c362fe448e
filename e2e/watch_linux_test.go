package e2e

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

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

	tty.Type(t, 0x03) // Ctrl-C
	select {
	case <-z.exited:
		if code := exitCodeOf(t, z.err); code != 0 {
			t.Errorf("after Ctrl-C: exit %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still watching 10s after Ctrl-C")
	}
	if f := frames(); len(f) != 3 {
		t.Errorf("%d frames, want 3 (one per change)", len(f))
	}
}
