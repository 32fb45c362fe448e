package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// notifyListener is a datagram socket bound as systemd binds its notify
// socket (a path, or an abstract name for "@…"), collecting what it
// receives.
type notifyListener struct {
	name string
	got  chan string
}

func listenNotify(t *testing.T, name string) *notifyListener {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	l := &notifyListener{name: name, got: make(chan string, 1000)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, _, err := c.ReadFromUnix(buf)
			if err != nil {
				return
			}
			l.got <- string(buf[:n])
		}
	}()
	t.Cleanup(func() {
		c.Close()
		<-done
	})
	return l
}

// until reads datagrams until one matches re, within a generous bound,
// and returns all it read.
func (l *notifyListener) until(t *testing.T, re string) []string {
	t.Helper()
	var seen []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case d := <-l.got:
			seen = append(seen, d)
			if regexp.MustCompile(re).MatchString(d) {
				return seen
			}
		case <-timeout:
			t.Fatalf("no datagram matching %q; got %q", re, seen)
		}
	}
}

// daemonScript is a command that speaks the protocol itself: it sends its
// own status to NOTIFY_SOCKET, as it found it in its environment, and
// writes the variable into $1/socket.
const daemonScript = `printf '%s' "$NOTIFY_SOCKET" > "$1/socket"
python3 -c '
import os, socket
a = os.environ["NOTIFY_SOCKET"]
if a.startswith("@"):
    a = "\0" + a[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"STATUS=the daemon speaks", a)
'`

// TestNotify: under systemd's notify protocol, a waiter tells systemd
// where it stands in the queue and who holds the lock, and extends the
// start timeout; once it holds, it says so, and sends READY=1 only under
// --notify-ready, after the command started. The command gets
// NOTIFY_SOCKET unchanged, and its own datagrams reach the socket. Both a
// socket at a path and an abstract one.
func TestNotify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sock  func(t *testing.T) string
		ready bool
	}{
		{"path, --notify-ready", func(t *testing.T) string { return filepath.Join(t.TempDir(), "notify") }, true},
		{"abstract", func(t *testing.T) string {
			return fmt.Sprintf("@zklock-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listenNotify(t, tc.sock(t))
			path := lockPath(t)
			conn := rawZK(t)
			h := startHolder(t, path)
			dir := t.TempDir()
			args := []string{"run", "--path", path}
			if tc.ready {
				args = append(args, "--notify-ready")
			}
			c := zklock(t, append(args, "--", "sh", "-c", daemonScript, "sh", dir)...)
			c.Env = append(c.Env, "NOTIFY_SOCKET="+l.name)
			var stderr strings.Builder
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waiting := l.until(t, fmt.Sprintf(`^STATUS=waiting for %s, position 2, held by \S+@\S+ pid %d \(sh -c [^)]*\) since \d\d:\d\d\n$`,
				regexp.QuoteMeta(path), h.Process.Pid))
			extend := l.until(t, `^EXTEND_TIMEOUT_USEC=90000000\n$`)
			if queueLen(conn, path) != 2 {
				t.Errorf("the waiter is not queued while it says so")
			}
			h.Process.Signal(syscall.SIGTERM)
			if err := c.Wait(); err != nil {
				t.Fatalf("the waiter: %v: %s", err, stderr.String())
			}
			rest := l.until(t, "^STATUS=released "+regexp.QuoteMeta(path)+"\n$")
			all := append(append(waiting, extend...), rest...)
			holding := slices.Index(all, "STATUS=holding "+path+"\n")
			started := slices.IndexFunc(all, func(d string) bool { return strings.Contains(d, "STATUS=holding "+path+", command running as pid ") })
			if holding < 0 || started < holding {
				t.Errorf("no holding status before the running one: %q", all)
			}
			readies := slices.IndexFunc(all, func(d string) bool { return strings.HasPrefix(d, "READY=1\n") })
			if tc.ready != (readies >= 0) || (tc.ready && readies != started) {
				t.Errorf("READY=1 (--notify-ready %v): %q", tc.ready, all)
			}
			if !slices.Contains(all, "STATUS=the daemon speaks") {
				t.Errorf("the daemon's own datagram did not arrive: %q", all)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "socket")); err != nil || string(got) != l.name {
				t.Errorf("the command got NOTIFY_SOCKET=%q (%v), want %q", got, err, l.name)
			}
			if stderr.Len() > 0 {
				t.Errorf("zklock said %q", stderr.String())
			}
		})
	}
}

// TestNotifyNested: a zklock inside another's command leaves systemd's
// status to the outer one, which systemd started: every STATUS= names the
// outer path only, and the inner one's --notify-ready still sends READY=1
// (once) for its command; the daemon below both gets NOTIFY_SOCKET.
func TestNotifyNested(t *testing.T) {
	l := listenNotify(t, filepath.Join(t.TempDir(), "notify"))
	outer, inner := lockPath(t), lockPath(t)+"-inner"
	dir := t.TempDir()
	c := zklock(t, "run", "--path", outer, "--", "zklock", "run", "--notify-ready", "--path", inner,
		"--", "sh", "-c", daemonScript, "sh", dir)
	c.Env = append(c.Env, "NOTIFY_SOCKET="+l.name)
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	all := l.until(t, "^STATUS=released "+regexp.QuoteMeta(outer)+"\n$")
	for _, d := range all {
		if strings.Contains(d, inner) {
			t.Errorf("the inner zklock spoke of its path: %q", d)
		}
	}
	if !slices.Contains(all, "STATUS=holding "+outer+"\n") {
		t.Errorf("no holding status from the outer zklock: %q", all)
	}
	readies := slices.DeleteFunc(slices.Clone(all), func(d string) bool { return d != "READY=1\n" })
	if len(readies) != 1 {
		t.Errorf("READY=1 %d times, want once (the inner --notify-ready): %q", len(readies), all)
	}
	if !slices.Contains(all, "STATUS=the daemon speaks") {
		t.Errorf("the daemon's own datagram did not arrive: %q", all)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "socket")); err != nil || string(got) != l.name {
		t.Errorf("the command got NOTIFY_SOCKET=%q (%v), want %q", got, err, l.name)
	}
}

// TestNotifyLost: systemd's status says when the lock is lost.
func TestNotifyLost(t *testing.T) {
	l := listenNotify(t, filepath.Join(t.TempDir(), "notify"))
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	dir := t.TempDir()
	path := lockPath(t)
	c := zklock(t, "run", "--servers", proxy.Addr(), "--session-timeout", "2s", "--path", path,
		"--", "sh", "-c", `touch "$1/started"; while :; do sleep 0.05; done`, "sh", dir)
	c.Env = append(c.Env, "NOTIFY_SOCKET="+l.name)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the command to start", func() bool { return fileExists(filepath.Join(dir, "started")) })
	proxy.Blackhole()
	l.until(t, "^STATUS=lost the lock on "+regexp.QuoteMeta(path)+": ")
	if code := zktest.ExitCodeT(t, c.Wait()); code != 76 {
		t.Errorf("exit %d, want 76", code)
	}
}

// TestSystemdUnit: the unit of docs/guide/systemd.md is one systemd
// accepts (systemd-analyze verify, from Debian's systemd package, which
// needs no systemd running), with zklock at the path it names.
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../docs/guide/systemd.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```ini\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("no ```ini block in docs/guide/systemd.md")
	}
	unit := string(m[1])
	for _, want := range []string{"Type=notify\n", "NotifyAccess=all\n", "ExecStart=/usr/bin/zklock run "} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	bin, err := exec.LookPath("zklock")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report-exporter.service")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(unit, "/usr/bin/zklock", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", file).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v: %s", err, out)
	}
}
