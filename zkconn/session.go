package zkconn

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// session follows the connection's state from go-zookeeper's event callback.
// go-zookeeper reconnects on its own and, after an expiry, silently opens a
// brand-new session; a lock holder must treat either expiry or a changed
// session id as the loss of everything its old session owned.
type session struct {
	mu        sync.Mutex
	id        int64         // the session this client owns; 0 until established
	up        chan struct{} // closed while a session is established and connected
	lost      chan struct{} // closed once, when the session is lost for good
	lostErr   error
	sessionID func() int64
	// downSince is when the connection last dropped; zero while up. The
	// keepalive declares the session lost once it has been down for
	// longer than the session timeout (see expireIfDown).
	downSince time.Time
	// flip is closed, and replaced, whenever the connection drops or
	// comes back, for a caller that shows the connection's state.
	flip chan struct{}
}

func newSession() *session {
	return &session{up: make(chan struct{}), lost: make(chan struct{}), flip: make(chan struct{})}
}

// flipLocked tells the callers of connection that the state changed.
func (s *session) flipLocked() {
	close(s.flip)
	s.flip = make(chan struct{})
}

// connection is since when no connection has carried the session (zero
// while one does) and a channel closed at the next change.
func (s *session) connection() (time.Time, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downSince, s.flip
}

// onEvent must not block: go-zookeeper calls it from its I/O goroutines.
func (s *session) onEvent(ev zk.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ev.Type == zk.EventSession && ev.State == zk.StateHasSession:
		var id int64
		if s.sessionID != nil {
			id = s.sessionID()
		}
		if s.id != 0 && id != 0 && id != s.id {
			s.markLostLocked(fmt.Errorf("%w: session 0x%x was replaced by 0x%x", ErrSessionLost, s.id, id))
			return
		}
		if s.id == 0 {
			s.id = id
		}
		s.downSince = time.Time{}
		select {
		case <-s.up:
		default:
			close(s.up)
			s.flipLocked()
		}
	case ev.Type == zk.EventSession && ev.State == zk.StateExpired:
		s.markLostLocked(fmt.Errorf("%w: session 0x%x expired", ErrSessionLost, s.id))
	case ev.Type == zk.EventSession && ev.State == zk.StateAuthFailed:
		s.markLostLocked(fmt.Errorf("%w: authentication failed", ErrPermission))
	case ev.Type == zk.EventSession && (ev.State == zk.StateDisconnected || ev.State == zk.StateConnecting):
		select {
		case <-s.up:
			s.up = make(chan struct{})
			s.downSince = time.Now()
			s.flipLocked()
		default:
		}
	case ev.Type == zk.EventNotWatching && ev.Err == zk.ErrSessionExpired:
		s.markLostLocked(fmt.Errorf("%w: session 0x%x expired", ErrSessionLost, s.id))
	}
}

func (s *session) markLostLocked(err error) {
	select {
	case <-s.lost:
	default:
		s.lostErr = err
		close(s.lost)
	}
}

// established reports whether a session was ever up.
func (s *session) established() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id != 0
}

// fail ends the session for good with err.
func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markLostLocked(err)
}

// setID records the established session once Dial has seen it.
func (s *session) setID(id int64) {
	s.mu.Lock()
	if s.id == 0 {
		s.id = id
	}
	s.mu.Unlock()
}

// isUp reports whether a connection carries the session now.
func (s *session) isUp() bool {
	select {
	case <-s.upChan():
		return true
	default:
		return false
	}
}

func (s *session) upChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

func (s *session) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lostErr
}

// expireIfDown marks the session lost when no connection has carried it
// for longer than timeout: the ensemble has certainly expired it by then,
// even if go-zookeeper never gets to hear so (a server that closes every
// handshake, an ensemble that stays out of reach). Without this, a caller
// waiting for the session to come back would wait forever.
func (s *session) expireIfDown(now time.Time, timeout time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.downSince.IsZero() || timeout <= 0 || now.Sub(s.downSince) <= timeout {
		return
	}
	s.markLostLocked(fmt.Errorf("%w: no server has carried session 0x%x for %s, longer than its timeout %s",
		ErrSessionLost, s.id, now.Sub(s.downSince).Round(time.Millisecond), timeout))
}
