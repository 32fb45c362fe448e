package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// listen binds a datagram socket as systemd binds its notify socket: at a
// path, or in the abstract namespace for a name starting with "@".
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func receive(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := c.ReadFromUnix(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

// TestSend: one datagram per Send, one KEY=VALUE a line, to a socket at a
// path and to an abstract one; a value's newline cannot add a line.
func TestSend(t *testing.T) {
	for _, name := range []string{
		filepath.Join(t.TempDir(), "notify"),
		fmt.Sprintf("@zklock-test-%d-%d", os.Getpid(), time.Now().UnixNano()),
	} {
		l := listen(t, name)
		c, err := Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Send("STATUS=waiting for /a\nREADY=1", "EXTEND_TIMEOUT_USEC=90000000"); err != nil {
			t.Fatal(err)
		}
		if err := c.Send("READY=1"); err != nil {
			t.Fatal(err)
		}
		if got, want := receive(t, l), "STATUS=waiting for /a\nEXTEND_TIMEOUT_USEC=90000000\n"; got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
		if got := receive(t, l); got != "READY=1\n" {
			t.Errorf("%s: got %q", name, got)
		}
		c.Close()
	}
}

// TestOpenRefuses: NOTIFY_SOCKET must name an absolute path or an
// abstract socket; one that nobody listens on fails to open.
func TestOpenRefuses(t *testing.T) {
	for _, name := range []string{"relative/notify", "@", "/", "vsock:2:1234"} {
		if _, err := Open(name); !errors.Is(err, ErrBadSocket) {
			t.Errorf("Open(%q): %v, want ErrBadSocket", name, err)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "nobody")); err == nil {
		t.Error("a socket nobody listens on opened")
	}
}

// TestSendAfterRebind: the socket is bound anew at the same name (the
// manager that owns it restarted) while zklock waits for hours: the next
// notifications reach the new socket, as sd_notify(3)'s, which addresses
// each datagram by name, do. Without them, a standby's start timeout is
// no longer extended and systemd kills it.
func TestSendAfterRebind(t *testing.T) {
	for _, name := range []string{
		filepath.Join(t.TempDir(), "notify"),
		fmt.Sprintf("@zklock-test-%d-%d", os.Getpid(), time.Now().UnixNano()),
	} {
		l := listen(t, name)
		c, err := Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Send("STATUS=one"); err != nil {
			t.Fatal(err)
		}
		receive(t, l)
		l.Close()
		if name[0] == '/' {
			os.Remove(name)
		}
		l = listen(t, name)
		if err := c.Send("STATUS=two"); err != nil {
			t.Errorf("%s: after the socket was bound again: %v", name, err)
		} else if got := receive(t, l); got != "STATUS=two\n" {
			t.Errorf("%s: got %q", name, got)
		}
		c.Close()
	}
}
