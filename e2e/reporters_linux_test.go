package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// How a run's reporters are read, in TestReportersNeverBlock.
type reader int

const (
	reading    reader = iota // stderr and the notify socket are read
	stderrFull               // stderr is a pipe that is full and that nobody reads
	notifyFull               // the notify socket's queue is full
)

// fullPipe is a pipe whose buffer is full: a write to it blocks until its
// reader, r, reads.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	size, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte("x"), size)); err != nil {
		t.Fatal(err)
	}
	return r, w
}

// fullSocket is a notify socket whose queue is full: nobody reads it, and
// it took datagrams until it would take no more.
func fullSocket(t *testing.T, name string) {
	t.Helper()
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: name}); err != nil {
		t.Fatal(err)
	}
	for sent := 0; ; sent++ {
		err := unix.Sendto(fd, []byte("STATUS=filler"), unix.MSG_DONTWAIT, nil)
		if errors.Is(err, unix.EAGAIN) {
			if sent == 0 {
				t.Fatal("the socket took no datagram at all")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// startDelay runs a command under zklock, with its reporters read as rd
// says, and returns how long after its lock node was made the command
// started: the marker it writes first, by its own mtime, against the
// node's ctime (the server is on this host: one clock). It fails the
// test if the command does not start while nobody reads.
func startDelay(t *testing.T, format string, rd reader) time.Duration {
	t.Helper()
	path := lockPath(t)
	dir := t.TempDir()
	marker, release := filepath.Join(dir, "marker"), filepath.Join(dir, "release")
	if err := syscall.Mkfifo(release, 0o600); err != nil {
		t.Fatal(err)
	}
	// Held open for reading and writing from the start, the FIFO makes
	// the command's read wait for a line, whenever it opens it, and the
	// line that releases it never waits for a reader.
	fifo, err := os.OpenFile(release, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	args := []string{"run", "--log-format", format, "--path", path, "--"}
	if format == "text" {
		args = append([]string{"-v"}, args...) // -v says acquired, started, released
	}
	c := zklock(t, append(args, "sh", "-c", `printf %s "$ZKLOCK_NODE" > "$1"; read x < "$2"`, "sh", marker, release)...)
	socket := filepath.Join(dir, "notify")
	c.Env = append(c.Env, "NOTIFY_SOCKET="+socket)
	if rd == notifyFull {
		fullSocket(t, socket)
	} else {
		listenNotify(t, socket)
	}
	var stderr bytes.Buffer
	var pr *os.File
	if rd == stderrFull {
		var pw *os.File
		pr, pw = fullPipe(t)
		c.Stderr = pw
	} else {
		c.Stderr = &stderr
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	defer func() {
		// Whatever happened, the command ends and zklock with it.
		if _, err := fifo.WriteString("go\n"); err != nil {
			t.Error(err)
		}
		if pr != nil {
			c.Stderr.(*os.File).Close()
			go func() { defer close(drained); io.Copy(&stderr, pr) }()
		}
		err := c.Wait()
		if pr != nil {
			<-drained
		}
		if err != nil && !t.Failed() {
			t.Errorf("zklock: %v\n%s", err, stderr.Bytes())
		}
		if format == "json" && !t.Failed() {
			checkEvents(t, stderr.Bytes(), rd)
		}
	}()

	// The marker, while nothing is read: the old zklock blocked for ever
	// on a full stderr under JSON, and never started the command.
	deadline := time.Now().Add(30 * time.Second)
	var node []byte
	var st os.FileInfo
	for {
		if node, err = os.ReadFile(marker); err == nil && len(node) > 0 {
			if st, err = os.Stat(marker); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start within 30s (%s, reporters %d)", format, rd)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, stat, err := rawZK(t).Get(string(node))
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime().Sub(time.UnixMilli(stat.Ctime))
}

// checkEvents checks a JSON stderr: every line after the filler an
// object, the run's events all there, in order, and, with a full notify
// socket, one warning that says so.
func checkEvents(t *testing.T, out []byte, rd reader) {
	t.Helper()
	var events, warnings []string
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimLeft(out, "x")))
	for sc.Scan() {
		var e struct{ Event, Msg string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Errorf("not a JSON object: %q", sc.Text())
			continue
		}
		if e.Event == "warning" {
			warnings = append(warnings, e.Msg)
		} else {
			events = append(events, e.Event)
		}
	}
	if got := strings.Join(events, " "); got != "acquired started released exit" {
		t.Errorf("events %q, want acquired started released exit", got)
	}
	want := 0
	if rd == notifyFull {
		want = 1
	}
	if len(warnings) != want || (want == 1 && !strings.Contains(warnings[0], "could not notify systemd: the socket's queue is full")) {
		t.Errorf("warnings %q, want %d about the notify socket", warnings, want)
	}
}

// TestReportersNeverBlock: what reports on a run never holds it up. With
// a full stderr pipe that nobody reads (in JSON, and in text with -v), or
// a notify socket whose queue is full, the command starts about as soon
// after the lock as it does when both are read: the old zklock never
// started it under JSON, and waited a second for each notification (2.3s
// in all). The bound is the same run's delay with its reporters read,
// measured just before, doubled, plus 100ms: load slows both alike, and
// the bound stays far below the seconds that blocking took.
func TestReportersNeverBlock(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		rd           reader
	}{
		{"json-stderr", "json", stderrFull},
		{"text-stderr", "text", stderrFull},
		{"notify", "json", notifyFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A pause of the whole machine can fall on the blocked run
			// alone: three tries, each a pair, before it counts. A zklock
			// that waits on its reporters fails all three, by seconds.
			var tries []string
			for range 3 {
				read := startDelay(t, tc.format, reading)
				blocked := startDelay(t, tc.format, tc.rd)
				bound := 2*read + 100*time.Millisecond
				t.Logf("the command started %s after the lock node was made with its reporters read, %s with them blocked (bound %s)", read, blocked, bound)
				if blocked <= bound || t.Failed() {
					return
				}
				tries = append(tries, fmt.Sprintf("%s (%s with them read)", blocked, read))
			}
			t.Errorf("with %s blocked, the command started over 100ms plus twice the delay with it read after the lock node was made: %s", tc.name, strings.Join(tries, ", "))
		})
	}
}
