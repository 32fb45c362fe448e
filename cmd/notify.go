package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/sdnotify"
	"github.com/zklock/zklock/internal/view"
)

// While zklock waits under systemd, the unit is still starting (Type=notify:
// the command's READY=1 ends the start), and TimeoutStartSec= would kill a
// standby that waits longer. So, while it waits, zklock asks for more time
// (EXTEND_TIMEOUT_USEC=) every notifyExtendEvery, notifyExtendBy ahead:
// three asks to miss before systemd gives up on a zklock that stopped
// running. Once the locks are held it asks one last time, so that the
// command has notifyExtendBy (systemd's default start timeout) to send its
// own READY=1 however long the wait took; an extension never shortens the
// unit's own timeout.
const (
	notifyExtendBy    = 90 * time.Second
	notifyExtendEvery = 30 * time.Second
)

// notifier tells systemd how the run goes, on the socket NOTIFY_SOCKET
// names: STATUS= lines (what `systemctl status` shows), the extensions
// while waiting, and READY=1 once the command has started under
// --notify-ready (for a command that does not speak the protocol: zklock
// never sends READY=1 otherwise, as the command's own belongs to the
// daemon). NOTIFY_SOCKET itself is left for the command. A nil notifier
// (no NOTIFY_SOCKET) does nothing.
//
// A zklock inside another's command finds NOTIFY_SOCKET too, passed on for
// the daemon. The unit's status and its timeouts are the outermost
// zklock's, the one systemd started: an inner one that said "holding" or
// "released" for its own paths would overwrite the outer's status, and
// say released while the outer still holds. So a nested zklock (nested
// set) says nothing but READY=1 under --notify-ready, where it stands in
// for the command's own.
type notifier struct {
	conn   *sdnotify.Conn
	ready  bool
	nested bool
	warnf  func(string, ...any)
	// tick returns a channel ticking every d and its stop; a variable for
	// the tests' own clock.
	tick func(d time.Duration) (<-chan time.Time, func())

	mu      sync.Mutex
	held    []string
	stop    chan struct{} // ends the extensions, while they run
	done    chan struct{}
	failed  bool // a send failed: warned once
	waiting bool // extensions have been asked for
}

func newNotifier(getenv func(string) string, ready bool, warnf func(string, ...any)) *notifier {
	socket := getenv(sdnotify.Env)
	if socket == "" {
		if ready {
			warnf("--notify-ready: %s is not set, so there is no one to tell (is this a systemd unit with Type=notify?)", sdnotify.Env)
		}
		return nil
	}
	_, nested := runner.AncestorHolder(getenv)
	if nested && !ready {
		return nil
	}
	conn, err := sdnotify.Open(socket)
	if err != nil {
		warnf("cannot notify systemd: %v", err)
		return nil
	}
	return &notifier{conn: conn, ready: ready, nested: nested, warnf: warnf, tick: tickEvery}
}

func tickEvery(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// event tells systemd what e means for the unit.
func (n *notifier) event(e runner.Event) {
	if n == nil {
		return
	}
	if n.nested {
		if _, ok := e.(runner.Started); ok {
			n.send("READY=1")
		}
		return
	}
	switch e := e.(type) {
	case runner.WaitStatus:
		n.send("STATUS=" + notifyWaiting(e, time.Now()))
		n.extend()
	case runner.WaitOver:
		n.endExtensions()
	case runner.Acquired:
		n.held = append(n.held, e.Path)
		n.send("STATUS=holding " + strings.Join(n.held, " "))
	case runner.Started:
		status := fmt.Sprintf("STATUS=holding %s, command running as pid %d", strings.Join(n.held, " "), e.PID)
		if n.ready {
			n.send("READY=1", status)
			break
		}
		n.send(status)
	case runner.Lost:
		n.send(fmt.Sprintf("STATUS=lost the lock on %s: %v", e.Path, e.Err))
	case runner.Revoked:
		n.send(fmt.Sprintf("STATUS=%s is revoked by %s", e.Path, e.By()))
	case runner.Released:
		n.send("STATUS=released " + strings.Join(e.Paths, " "))
	}
}

// notifyWaiting is the status while waiting: "waiting for /locks/x,
// position 2, held by deploy@web-3 pid 81233 (./run.sh) since 03:00".
func notifyWaiting(st runner.WaitStatus, now time.Time) string {
	s := view.Cell(view.WaitSentence(st))
	if h := st.Holder; h != nil && !h.HeldSince.IsZero() {
		layout := "15:04"
		if now.Sub(h.HeldSince) > 20*time.Hour {
			layout = "2006-01-02 15:04"
		}
		s += " since " + h.HeldSince.Local().Format(layout)
	}
	return s
}

// extend asks for more time now and every notifyExtendEvery until
// endExtensions, from a goroutine of its own; the wait's events need not
// come that often.
func (n *notifier) extend() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stop != nil {
		return
	}
	n.waiting = true
	n.stop, n.done = make(chan struct{}), make(chan struct{})
	ticks, stopTicks := n.tick(notifyExtendEvery)
	go func(stop <-chan struct{}, done chan<- struct{}) {
		defer close(done)
		defer stopTicks()
		for {
			n.send(extendTimeout(notifyExtendBy))
			select {
			case <-stop:
				return
			case <-ticks:
			}
		}
	}(n.stop, n.done)
}

// endExtensions stops the extensions; after a wait, it asks once more, for
// the command's start.
func (n *notifier) endExtensions() {
	n.mu.Lock()
	stop, done, waited := n.stop, n.done, n.waiting
	n.stop, n.done, n.waiting = nil, nil, false
	n.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	if waited {
		n.send(extendTimeout(notifyExtendBy))
	}
}

func extendTimeout(d time.Duration) string {
	return "EXTEND_TIMEOUT_USEC=" + strconv.FormatInt(d.Microseconds(), 10)
}

// send sends one datagram, without waiting: the events come on the run's
// own path (the acquisition, the start, a loss), which a reader that
// stopped reading must never hold up. A datagram the socket has no room
// for is dropped. The first failure is a warning, later ones
// are not said again.
func (n *notifier) send(lines ...string) {
	if err := n.conn.Send(lines...); err != nil {
		n.mu.Lock()
		first := !n.failed
		n.failed = true
		n.mu.Unlock()
		if first && errors.Is(err, sdnotify.ErrFull) {
			n.warnf("could not notify systemd: %v; dropping notifications while it is, rather than wait", err)
		} else if first {
			n.warnf("could not notify systemd: %v", err)
		}
	}
}

// close ends the extensions, if any, and closes the socket.
func (n *notifier) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.waiting = false
	n.mu.Unlock()
	n.endExtensions()
	n.conn.Close()
}
