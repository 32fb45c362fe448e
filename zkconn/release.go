package zkconn

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// # A close that dies with its server
//
// Closing the session deletes all its ephemeral nodes in the one
// transaction, so a confirmed close is a confirmed release. The close goes
// to the server the client is connected to, which passes it to the leader;
// if the leader dies meanwhile (or the server itself), the close dies with
// it, and go-zookeeper, closing, never sends it again. The session lives
// on (the new leader restarts every session's clock when it starts,
// timeout.go) and its nodes block the next holder until it expires, a
// whole session timeout after the new leader took over, while the new
// leader would have taken the close within the election's few seconds.
//
// So a close that goes unanswered is sent again: the client resumes the
// session on a connection of its own (raw.go), through each server of the
// connect string in turn, and closes it there, until the release timeout
// ends. Servers that are still electing close the connection at once;
// the first that serves passes the close to the new leader. A server that
// answers the resume with session 0 no longer has the session: it was
// closed after all (the close reached the leader, only its reply was
// lost), or it expired; either way its nodes are gone, and the release is
// confirmed. The resume sends last zxid 0, which no server refuses
// (restore.go).
//
// # How long a release is worth trying
//
// Not a fixed time: on a loaded machine a restarted server, or one that
// has just won an election, may take seconds to answer, and a release
// that did happen must not be reported as unconfirmed. The session lives
// on the server until a whole timeout after the last request it answered
// (LastHeard; a leader that starts restarts the clock), so until then the
// nodes may still be there and a close frees them sooner than the expiry
// would; past it a server that answers says the session is gone, which
// confirms the release too. So the release goes on until the session's
// life, counted from the latest reply, plus one more attempt to hear its
// end, and never less than releaseFloor. Each round of the connect string
// gives every server twice the time of the round before, so a server
// that answers slowly is waited for rather than turned away at the same
// bound every time.

// releaseFloor is the least time a release is tried for, however short
// the session timeout: reconnecting to a restarted server takes seconds.
const releaseFloor = 5 * time.Second

// ReleaseDeadline is when to stop trying to release the session's nodes
// (WaitSession, then CloseAcked) and say that the release could not be
// confirmed. It follows LastHeard: ask again after a reconnect.
func (c *Client) ReleaseDeadline() time.Time {
	ct := c.Contact()
	t := max(ct.Timeout, ct.Granted)
	return latest(time.Now().Add(releaseFloor), c.LastHeard().Add(t+probeLimit(t)))
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// retryPause is the pause between two rounds of the connect string while
// a close is sent again: servers in an election turn a connection away at
// once.
const retryPause = 200 * time.Millisecond

// closeElsewhere sends the session's close again, through every server in
// turn, until one confirms it or ctx ends.
func (c *Client) closeElsewhere(ctx context.Context) bool {
	c.wire.mu.Lock()
	session, passwd := c.wire.session, c.wire.passwd
	c.wire.mu.Unlock()
	if session == 0 {
		return false
	}
	limit := probeLimit(c.Contact().Timeout)
	for {
		for _, address := range c.opts.ConnString.Servers {
			if c.closeVia(ctx, address, session, passwd, limit) {
				c.debugf("closed session 0x%x through %s: the first close went unanswered", session, address)
				return true
			}
			if ctx.Err() != nil {
				return false
			}
		}
		limit *= 2
		t := time.NewTimer(retryPause)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// closeVia resumes session on a connection of its own to address and
// closes it there, within limit; it reports whether the server confirmed
// the close or no longer knows the session.
func (c *Client) closeVia(ctx context.Context, address string, session int64, passwd []byte, limit time.Duration) bool {
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	rc, done, err := c.dialRaw(actx, address)
	if err != nil {
		return false
	}
	defer done()
	_, known, err := rc.resume(session, passwd, 0, c.opts.SessionTimeout)
	switch {
	case err != nil:
		return false
	case !known:
		return true
	}
	if err := rc.addAuth(c.opts.Auth); err != nil {
		return false
	}
	_, code, _, err := rc.request(jute.OpCloseSession, nil)
	return err == nil && code == 0
}
