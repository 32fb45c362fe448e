package cmd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/sdnotify"
)

// notifySocket binds a datagram socket as systemd does, and returns its
// name and a function that reads the next datagram.
func notifySocket(t *testing.T) (string, func() string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return name, func() string {
		buf := make([]byte, 4096)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := c.ReadFromUnix(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
}

// TestNotifier: what systemd hears of a run that waits, on a clock the
// test ticks: the status and an extension as the wait begins, another
// extension on every tick while it waits, a last one when the wait is
// over (for the command's own start), then the holding status and, under
// --notify-ready, READY=1 once the command runs.
func TestNotifier(t *testing.T) {
	socket, next := notifySocket(t)
	var warned []string
	n := newNotifier(func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return socket
		}
		return ""
	}, true, func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) })
	if n == nil {
		t.Fatalf("no notifier: %v", warned)
	}
	ticks := make(chan time.Time)
	stopped := make(chan struct{})
	n.tick = func(d time.Duration) (<-chan time.Time, func()) {
		if d != notifyExtendEvery {
			t.Errorf("ticks every %s, want %s", d, notifyExtendEvery)
		}
		return ticks, func() { close(stopped) }
	}
	since := time.Date(2026, 11, 21, 3, 0, 0, 0, time.Local)
	d := owner.Owner{Zklock: "1", Host: "web-3", PID: 81233, User: "deploy", Cmd: []string{"./run.sh"}}
	st := runner.WaitStatus{Path: "/locks/x", Position: 2,
		Holder: &runner.Holder{Contender: recipe.Contender{Name: "_c_a-lock-0000000001"}, NodeData: owner.Decode(d.Encode()), HeldSince: since}}
	extend := fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d\n", notifyExtendBy.Microseconds())

	n.event(st)
	if got, want := next(), "STATUS=waiting for /locks/x, position 2, held by deploy@web-3 pid 81233 (./run.sh) since 2026-11-21 03:00\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for i := range 3 {
		if got := next(); got != extend {
			t.Errorf("extension %d: %q, want %q", i, got, extend)
		}
		ticks <- time.Now()
	}
	if got := next(); got != extend { // the third tick's
		t.Errorf("got %q", got)
	}
	n.event(runner.WaitOver{Waited: time.Hour})
	<-stopped
	if got := next(); got != extend {
		t.Errorf("after the wait: %q, want the last extension", got)
	}
	n.event(runner.Acquired{Path: "/locks/x"})
	if got := next(); got != "STATUS=holding /locks/x\n" {
		t.Errorf("got %q", got)
	}
	n.event(runner.Started{PID: 4242})
	if got := next(); got != "READY=1\nSTATUS=holding /locks/x, command running as pid 4242\n" {
		t.Errorf("got %q", got)
	}
	n.close()
	if len(warned) > 0 {
		t.Errorf("warned: %v", warned)
	}
}

// TestNotifierNone: without NOTIFY_SOCKET there is nothing to tell, and
// --notify-ready says so; a socket systemd could not have set is a
// warning, once.
func TestNotifierNone(t *testing.T) {
	var warned []string
	warnf := func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }
	if n := newNotifier(func(string) string { return "" }, false, warnf); n != nil || len(warned) > 0 {
		t.Errorf("without NOTIFY_SOCKET: %v, %v", n, warned)
	}
	if n := newNotifier(func(string) string { return "" }, true, warnf); n != nil || len(warned) != 1 || !strings.Contains(warned[0], "NOTIFY_SOCKET is not set") {
		t.Errorf("--notify-ready without NOTIFY_SOCKET: %v", warned)
	}
	warned = nil
	if n := newNotifier(func(string) string { return "relative" }, false, warnf); n != nil || len(warned) != 1 {
		t.Errorf("NOTIFY_SOCKET=relative: %v", warned)
	}
	var nilNotifier *notifier
	nilNotifier.event(runner.Started{PID: 1})
	nilNotifier.close()
}

// TestNotifierNested: a zklock inside another's command (ZKLOCK_HELD names
// an ancestor) leaves systemd's status and timeouts to the outer one: it
// sends nothing at all, or, under --notify-ready, READY=1 alone when its
// command starts. A ZKLOCK_HELD that names no ancestor (a copied
// environment) changes nothing.
func TestNotifierNested(t *testing.T) {
	socket, next := notifySocket(t)
	env := func(holder int) func(string) string {
		return func(k string) string {
			switch k {
			case "NOTIFY_SOCKET":
				return socket
			case runner.EnvHeld:
				return fmt.Sprintf("exclusive:0x1:%d:/outer/_c_a-lock-0000000001", holder)
			}
			return ""
		}
	}
	var warned []string
	warnf := func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }
	if n := newNotifier(env(os.Getppid()), false, warnf); n != nil {
		t.Fatalf("nested, without --notify-ready: a notifier")
	}
	events := []runner.Event{
		runner.WaitStatus{Path: "/inner", Position: 2},
		runner.WaitOver{Waited: time.Second},
		runner.Acquired{Path: "/inner"},
		runner.Started{PID: 4242},
		runner.Revoked{RevokedError: &recipe.RevokedError{Path: "/inner", Node: "/inner/x"}},
		runner.Lost{Path: "/inner", Err: errors.New("gone")},
		runner.Released{Paths: []string{"/inner"}},
	}
	n := newNotifier(env(os.Getppid()), true, warnf)
	if n == nil {
		t.Fatalf("nested, --notify-ready: no notifier: %v", warned)
	}
	for _, e := range events {
		n.event(e)
	}
	n.close()
	// The socket keeps its datagrams in order: a mark sent after the run
	// comes right after whatever the run sent.
	mark, err := sdnotify.Open(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer mark.Close()
	if err := mark.Send("X_MARK=1"); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "READY=1\n" {
		t.Errorf("nested, --notify-ready: first datagram %q, want READY=1 alone", got)
	}
	if got := next(); got != "X_MARK=1\n" {
		t.Errorf("nested, --notify-ready: %q after READY=1, want nothing", got)
	}

	n = newNotifier(env(os.Getpid()), false, warnf)
	if n == nil {
		t.Fatalf("ZKLOCK_HELD naming no ancestor: no notifier: %v", warned)
	}
	n.event(runner.Acquired{Path: "/inner"})
	n.close()
	if got := next(); got != "STATUS=holding /inner\n" {
		t.Errorf("ZKLOCK_HELD naming no ancestor: %q, want the status", got)
	}
	if len(warned) > 0 {
		t.Errorf("warned: %v", warned)
	}
}
