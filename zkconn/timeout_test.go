package zkconn

import (
	"net"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// resumeOn resumes session 0x1234 on a new connection, granted granted.
func resumeOn(tr *wireTracker, granted time.Duration) (*fakeConn, net.Conn) {
	fc := &fakeConn{}
	c := tr.wrap(fc, "s", 0)
	handshakeAs(c, fc, 0x1234, granted)
	return fc, c
}

// TestTimeoutFollowsReconnects follows timeout.go's rules with an
// injected clock: a session created with 10s; a reconnect granting 4s
// applies at once; one granting 10s again waits for the quorum to confirm
// a request sent T_old/4 after it; one granting more than the session was
// created with never counts beyond 10s.
func TestTimeoutFollowsReconnects(t *testing.T) {
	base := time.Unix(1000, 0)
	now := base
	at := func(ms int) { now = base.Add(time.Duration(ms) * time.Millisecond) }
	tr := &wireTracker{now: func() time.Time { return now }}
	fc := &fakeConn{}
	c := tr.wrap(fc, "s", 0)
	handshakeAs(c, fc, 0, 10*time.Second) // a new session
	want := func(what string, timeout, granted, pending time.Duration) {
		t.Helper()
		if ct := tr.contact(); ct.Timeout != timeout || ct.Granted != granted || ct.Pending != pending {
			t.Errorf("%s: timeout %s, granted %s, pending %s; want %s, %s, %s",
				what, ct.Timeout, ct.Granted, ct.Pending, timeout, granted, pending)
		}
	}
	want("created", 10*time.Second, 10*time.Second, 0)

	// A rolling restart lowered the servers' maxSessionTimeout.
	at(2000)
	changed := tr.changes()
	resumeOn(tr, 4*time.Second)
	want("shrunk", 4*time.Second, 4*time.Second, 0)
	select {
	case <-changed:
	default:
		t.Error("a new timeout did not wake the guard")
	}
	if q := tr.quorum(); !q.Equal(base.Add(2 * time.Second)) {
		t.Errorf("the resume certified %v, want its send time", q.Sub(base))
	}

	// Raised again: 10s is pending until a request sent at least 1s
	// (the old T/4) after the resume at +3s is certified.
	at(3000)
	fc, c = resumeOn(tr, 10*time.Second)
	want("grown, unconfirmed", 4*time.Second, 10*time.Second, 10*time.Second)
	exchange := func(sendMs, replyMs int, xid, op int32) {
		at(sendMs)
		c.Write(req(xid, op))
		at(replyMs)
		fc.in.Write(rep(xid, 0))
		c.Read(make([]byte, 4096))
	}
	exchange(3500, 3510, 1, jute.OpSync) // 0.5s after the resume
	exchange(4000, 4010, 2, jute.OpSync) // 1s after it
	exchange(6100, 6110, 3, jute.OpSync) // certifies the first (T/4 of 10s is 2.5s)
	want("a request 0.5s after the resume certified", 4*time.Second, 10*time.Second, 10*time.Second)
	exchange(6600, 6610, 4, jute.OpSync) // certifies the second
	want("a request T_old/4 after the resume certified", 10*time.Second, 10*time.Second, 0)

	// A server that grants more than the session was created with: an
	// election would take the leader back to 10s.
	at(8000)
	resumeOn(tr, 20*time.Second)
	want("above the created timeout", 10*time.Second, 20*time.Second, 0)

	// Lower again while a raise is pending: the lower applies at once and
	// the pending raise is dropped.
	at(9000)
	resumeOn(tr, 4*time.Second)
	at(9500)
	resumeOn(tr, 10*time.Second)
	at(9600)
	resumeOn(tr, 6*time.Second)
	want("lowered while a raise was pending", 4*time.Second, 6*time.Second, 6*time.Second)
	at(9700)
	resumeOn(tr, 2*time.Second)
	want("lowered below", 2*time.Second, 2*time.Second, 0)
}
