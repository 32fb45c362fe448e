// Package zkconn opens a ZooKeeper session for zklock: it parses the connect
// string (including the chroot that go-zookeeper leaves to its callers),
// applies digest auth and the matching ACLs, gives every blocking call a
// context, and tells its owner when the session is lost.
package zkconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Defaults for the connection flags.
const (
	// DefaultSessionTimeout is long enough to ride out a leader election
	// (typically a few seconds) without losing the lock, and short enough that
	// a crashed holder's lock passes on within seconds. The server clamps the
	// request to [2, 20] × its tickTime (4 s to 40 s by default).
	DefaultSessionTimeout = 10 * time.Second
	// DefaultConnectTimeout bounds the wait for a first session.
	DefaultConnectTimeout = 5 * time.Second
)

// Options configure Dial.
type Options struct {
	ConnString     ConnString
	SessionTimeout time.Duration // requested; the server may clamp it
	ConnectTimeout time.Duration // how long to wait for the first session
	Auth           *Auth         // nil: no auth, open ACLs
	TLS            *tls.Config   // nil: plain TCP; else TLS to the servers' secureClientPort
	// SASL logs in on every connection (sasl.go); nil: no SASL.
	SASL SASLLogin
	// Protect makes the lock paths this client creates persistent, with
	// its ACL (see CreatePathNode). It needs Auth.
	Protect bool
	// Debugf receives go-zookeeper's own log lines (for -v); nil discards them.
	Debugf func(format string, args ...any)
	// Warnf receives one-line warnings (a server whose name does not
	// resolve); nil discards them.
	Warnf func(format string, args ...any)
	// FollowEnsemble keeps the servers to reconnect to in step with the
	// ensemble's membership, from /zookeeper/config (follow.go), at the
	// cost of one data watch: for a session that must outlive a
	// migration of the ensemble to new hosts.
	FollowEnsemble bool
}

// Client is one ZooKeeper session with a chroot applied to every path.
type Client struct {
	conn   *zk.Conn
	chroot string
	acl    []zk.ACL
	// protect: lock paths are created persistent (CreatePathNode).
	protect bool
	sess    *session
	wire    *wireTracker
	closed  atomic.Bool
	// done is closed when Close (or CloseAcked) starts: whatever waits
	// for the session to come back stops waiting.
	done   chan struct{}
	debugf func(format string, args ...any)
	opts   Options
	probes probes // of refused resumes (restore.go)
	// connectBy is when Dial gives up waiting for the first session
	// (tlsbound.go).
	connectBy time.Time

	// The keepalive goroutine (keepalive.go): started once the session is
	// up, ended by Close.
	stop, stopped chan struct{}
	stopOnce      sync.Once
	// quorum says whether the keepalive syncs (quorumkeep.go).
	quorum *quorumKeep
	// hosts is the library's host provider (hosts.go), which follow
	// updates (follow.go).
	hosts *hostList
	// followed is closed when the goroutine that follows the membership
	// ends; nil when there is none (Options.FollowEnsemble unset).
	followed chan struct{}
}

type logFunc func(string, ...any)

func (f logFunc) Printf(format string, args ...any) { f(format, args...) }

// Dial connects and waits, at most ConnectTimeout (and no longer than ctx
// allows), for a session. Failure to get one is ErrUnavailable.
func Dial(ctx context.Context, o Options) (*Client, error) {
	if len(o.ConnString.Servers) == 0 {
		return nil, fmt.Errorf("%w: no servers", ErrBadConnString)
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	logf := logFunc(func(string, ...any) {})
	if o.Debugf != nil {
		logf = o.Debugf
	}
	acl, err := o.acl()
	if err != nil {
		return nil, err
	}
	if err := saslLogin(ctx, o.SASL); err != nil {
		return nil, err
	}
	c := &Client{chroot: o.ConnString.Chroot, acl: acl, protect: o.Protect, sess: newSession(), done: make(chan struct{}),
		wire:   &wireTracker{now: time.Now, handshake: handshakeLimit(o.SessionTimeout)},
		debugf: logf, opts: o, quorum: newQuorumKeep(), hosts: newHostList(ctx, o.ConnectTimeout, o.Warnf),
		connectBy: time.Now().Add(o.ConnectTimeout)}
	c.wire.refusedResume = c.probeRefusal
	failed := lastFailure{tls: o.TLS != nil, logf: o.Debugf}
	// The library's own log lines stay out of -v: zklock says in its own
	// words what they would (each failure to reach a server, above; the
	// session, in the runner's progress lines).
	conn, _, err := zk.Connect(o.ConnString.Servers, o.SessionTimeout,
		zk.WithLogger(logFunc(func(string, ...any) {})), zk.WithLogInfo(false),
		zk.WithEventCallback(c.sess.onEvent), zk.WithDialer(failed.dialer(c.dialer())),
		zk.WithHostProvider(c.hosts))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	c.conn = conn
	c.sess.mu.Lock()
	c.sess.sessionID = conn.SessionID
	c.sess.mu.Unlock()

	if err := c.awaitSession(ctx, o, &failed); err != nil {
		return nil, err
	}
	if err := c.addAuth(ctx, o.Auth); err != nil {
		c.Close()
		return nil, err
	}
	c.wire.setHandshake(handshakeLimit(c.Contact().Timeout))
	c.stop, c.stopped = make(chan struct{}), make(chan struct{})
	go c.keepalive()
	if o.FollowEnsemble {
		c.followed = make(chan struct{})
		go c.follow()
	}
	return c, nil
}

// dialer connects to one server for go-zookeeper, through the wire
// tracker. It waits while a probe of a refused resume runs (restore.go):
// the probe resumes the session on a connection of its own, and a resume
// of go-zookeeper's at the same time could end up with the leader taking
// the probe's server for the session's.
func (c *Client) dialer() func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		if err := c.probes.wait(c.done); err != nil {
			return nil, err
		}
		start := time.Now()
		conn, err := c.connect(network, address, timeout)
		if err != nil {
			return nil, err
		}
		// Watch the plaintext: with TLS, inside the encryption.
		return c.wire.wrap(conn, address, time.Since(start)), nil
	}
}

// connect connects to one server: over TLS when configured, with SASL
// when configured.
func (c *Client) connect(network, address string, timeout time.Duration) (net.Conn, error) {
	var conn net.Conn
	var err error
	if c.opts.TLS != nil {
		// The handshake is part of connecting; a slow one is no reason to
		// fail (tlsbound.go).
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: c.tlsLimit(timeout)}, network, address, serverTLS(c.opts.TLS, address))
		if err != nil {
			c.tlsTimedOut(err)
		}
	} else {
		conn, err = net.DialTimeout(network, address, timeout)
	}
	if err != nil {
		return nil, err
	}
	if c.opts.SASL != nil {
		// Below the tracker, which so sees the ConnectResponse only
		// after the SASL exchange (sasl.go).
		conn = newSASLConn(conn, c.opts.SASL, address, c.saslFailed)
	}
	return conn, nil
}

// awaitSession waits, within the connect timeout, for the first session.
func (c *Client) awaitSession(ctx context.Context, o Options, failed *lastFailure) error {
	wait, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	select {
	case <-c.sess.upChan():
		c.sess.setID(c.conn.SessionID())
	case <-c.sess.lost:
		c.Close()
		return c.sess.err()
	case <-wait.Done():
		// No session was established, so there is nothing to close on
		// the server; go-zookeeper's Close would still wait up to a
		// second for the reply to its close request. Let it finish in the
		// background (it ends by itself within that second) so that an
		// unreachable ensemble fails within --connect-timeout.
		if c.closed.CompareAndSwap(false, true) {
			close(c.done)
			go c.conn.Close()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return failed.noSession(o.ConnString.Servers, o.ConnectTimeout)
	}
	return nil
}

// addAuth adds a digest (or other non-x509) identity to the session.
func (c *Client) addAuth(ctx context.Context, a *Auth) error {
	// An x509 identity comes with the TLS handshake; nothing to add.
	if a != nil && a.Scheme != SchemeX509 {
		if _, err := call(ctx, func() (struct{}, error) {
			return struct{}{}, c.conn.AddAuth(a.Scheme, []byte(a.Credentials))
		}); err != nil {
			if IsPermission(err) {
				return fmt.Errorf("%w: auth as %q refused: %v", ErrPermission, a.User(), err)
			}
			return fmt.Errorf("%w: auth: %v", ErrUnavailable, err)
		}
	}
	return nil
}

// stopKeepalive ends the keepalive, if it was started, and waits for it.
func (c *Client) stopKeepalive() {
	if c.stop == nil {
		return
	}
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.stopped
}

// Close ends the session; the server deletes its ephemeral nodes in the same
// step. Safe to call more than once.
func (c *Client) Close() {
	if c.closed.CompareAndSwap(false, true) {
		close(c.done)
		c.stopKeepalive()
		c.conn.Close()
		c.stopFollowing()
	}
}

// stopFollowing waits for the goroutine that follows the membership, if
// there is one, after done is closed: the library ends its read with the
// connection.
func (c *Client) stopFollowing() {
	if c.followed != nil {
		<-c.followed
	}
}

// SessionID is the id of the session this client owns.
func (c *Client) SessionID() int64 {
	c.sess.mu.Lock()
	defer c.sess.mu.Unlock()
	return c.sess.id
}

// Lost is closed when the session is lost for good (expired or replaced).
func (c *Client) Lost() <-chan struct{} { return c.sess.lost }

// Disconnected is since when no connection has carried the session: zero
// while one does. The channel is closed at the next change (the connection
// drops or comes back); take both at once, so that no change falls between
// reading the one and waiting on the other.
func (c *Client) Disconnected() (time.Time, <-chan struct{}) { return c.sess.connection() }

// LostErr says why Lost was closed; nil while the session lives.
func (c *Client) LostErr() error { return c.sess.err() }

// NegotiatedTimeout is the session timeout the server granted on the
// latest connect: the request clamped to that server's
// [minSessionTimeout, maxSessionTimeout]. Each reconnect negotiates it
// again; Contact says which timeout the session's expiry counts with.
func (c *Client) NegotiatedTimeout() time.Duration {
	t, _ := c.wire.snapshot()
	return t
}

// Contact is what the client knows of the ensemble's hold on its session.
type Contact struct {
	// QuorumHeard: see Client.QuorumHeard.
	QuorumHeard time.Time
	// Timeout is the session timeout to count from QuorumHeard: the
	// smallest one the leader may apply to the session now (timeout.go).
	// The session cannot expire before QuorumHeard + Timeout.
	Timeout time.Duration
	// Granted is the timeout the server granted on the latest connect.
	// It is above Timeout while a grown timeout awaits the quorum's
	// confirmation (then Pending is the value it will take), or when it
	// exceeds the timeout the session was created with.
	Granted, Pending time.Duration
}

// Contact returns what the client knows now of its session's hold on the
// ensemble. It changes with every confirmation from the quorum and every
// reconnect; ContactChanged tells when.
func (c *Client) Contact() Contact { return c.wire.contact() }

// ContactChanged returns a channel that is closed at the next change of
// Contact. Take the channel before reading Contact, so that no change
// falls between the two.
func (c *Client) ContactChanged() <-chan struct{} { return c.wire.changes() }

// LastHeard is the send time of the last request (go-zookeeper's own pings
// included) that got a reply from the server connected at the time. It
// shows the connection is alive; it is no bound on the session's expiry,
// since a server cut off from its leader goes on answering (QuorumHeard is
// that bound).
func (c *Client) LastHeard() time.Time {
	_, t := c.wire.snapshot()
	return t
}

// QuorumHeard is the latest moment the ensemble's leader is known to have
// restarted this session's expiry clock (see quorum.go). The session cannot
// expire before QuorumHeard plus Contact's Timeout, whichever server the
// client is connected to and whatever that server still answers. It
// follows the clock only once KeepQuorumHeard has started the syncs;
// until then only connects and writes move it.
func (c *Client) QuorumHeard() time.Time { return c.wire.quorum() }

// CreateZxid is the zxid of this session's create of p, read from the reply
// on the wire: the node's czxid, known without asking the server again.
func (c *Client) CreateZxid(p string) (int64, bool) {
	return c.wire.createdZxid(c.abs(p))
}

// CloseAcked closes the session and reports whether the ensemble
// confirmed it, trying until ctx ends. Closing deletes every ephemeral
// node of the session in one transaction, so a confirmed close is a
// confirmed release of all of them. A close that goes unanswered (it died
// with the leader, say) is sent again through the other servers, as soon
// as one serves (release.go).
func (c *Client) CloseAcked(ctx context.Context) bool {
	if !c.closed.CompareAndSwap(false, true) {
		return false
	}
	close(c.done)
	c.stopKeepalive()
	before := time.Now()
	c.conn.Close()
	c.stopFollowing()
	// The close is the last request; a reply to it moves LastHeard to
	// its send time, which is after before.
	if !c.LastHeard().Before(before) {
		return true
	}
	return c.closeElsewhere(ctx)
}

// Server is the address of the server currently connected, if any.
func (c *Client) Server() string { return c.conn.Server() }

// WaitSession blocks until the connection is back with the same session. It
// is what a caller does after a connection-loss error before retrying. On
// a client that is closed it returns ErrClosed.
func (c *Client) WaitSession(ctx context.Context) error {
	select {
	case <-c.sess.lost:
		return c.sess.err()
	case <-c.done:
		return ErrClosed
	default:
	}
	select {
	case <-c.sess.upChan():
		return nil
	case <-c.sess.lost:
		return c.sess.err()
	case <-c.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Closed is closed once Close (or CloseAcked) has been called.
func (c *Client) Closed() <-chan struct{} { return c.done }

// Chroot is the prefix applied to every path ("" for none).
func (c *Client) Chroot() string { return c.chroot }

func (c *Client) abs(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == "/" {
		return c.chroot
	}
	return c.chroot + p
}

func (c *Client) rel(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == c.chroot {
		return "/"
	}
	return strings.TrimPrefix(p, c.chroot)
}

// call runs a go-zookeeper request but returns as soon as ctx is done. The
// request itself cannot be cancelled; its goroutine ends when the reply
// arrives or when Close flushes every pending request, so Close is its owner.
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Create creates a node and returns its path (relative to the chroot).
func (c *Client) Create(ctx context.Context, p string, data []byte, flags int32) (string, error) {
	created, err := call(ctx, func() (string, error) { return c.conn.Create(c.abs(p), data, flags, c.acl) })
	if err != nil {
		return "", c.wrap(OpCreate, p, err)
	}
	return c.rel(created), nil
}

// CreateContainer creates a container node, which the server deletes once
// its last child is gone. Servers older than 3.5.3 lack containers; there
// zklock falls back to a persistent node.
//
// A lock path gets the client's ACL (protected under auth). Its parents
// (open=true) stay open to everyone: they only group lock paths, an empty
// container is all anyone could delete there, and the first user to lock
// /locks/a must not end up owning /locks for everyone else.
func (c *Client) CreateContainer(ctx context.Context, p string, open bool) error {
	acl := c.acl
	if open {
		acl = zk.WorldACL(zk.PermAll)
	}
	_, err := call(ctx, func() (string, error) { return c.conn.CreateContainer(c.abs(p), nil, zk.FlagContainer, acl) })
	if errors.Is(err, zk.ErrUnknown) || errors.Is(err, zk.ErrAPIError) {
		_, err = call(ctx, func() (string, error) { return c.conn.Create(c.abs(p), nil, zk.FlagPersistent, acl) })
	}
	return c.wrap(OpCreate, p, err)
}

// Children lists a node's children, without a watch.
func (c *Client) Children(ctx context.Context, p string) ([]string, error) {
	ch, err := call(ctx, func() ([]string, error) {
		ch, _, err := c.conn.Children(c.abs(p))
		return ch, err
	})
	return ch, c.wrap(OpList, p, err)
}

// Exists checks a node without a watch.
func (c *Client) Exists(ctx context.Context, p string) (bool, *zk.Stat, error) {
	type r struct {
		ok bool
		st *zk.Stat
	}
	res, err := call(ctx, func() (r, error) {
		ok, st, err := c.conn.Exists(c.abs(p))
		return r{ok, st}, err
	})
	return res.ok, res.st, c.wrap(OpCheck, p, err)
}

// Get reads a node's data and stat.
func (c *Client) Get(ctx context.Context, p string) ([]byte, *zk.Stat, error) {
	type r struct {
		data []byte
		st   *zk.Stat
	}
	res, err := call(ctx, func() (r, error) {
		data, st, err := c.conn.Get(c.abs(p))
		return r{data, st}, err
	})
	return res.data, res.st, c.wrap(OpRead, p, err)
}

// Set writes a node's data at any version.
func (c *Client) Set(ctx context.Context, p string, data []byte) error {
	_, err := c.SetVersion(ctx, p, data, -1)
	return err
}

// Delete deletes a node at any version.
func (c *Client) Delete(ctx context.Context, p string) error {
	return c.DeleteVersion(ctx, p, -1)
}

// DeleteVersion deletes a node only if its data version is still version
// (-1: at any version). ErrBadVersion says someone wrote it first.
func (c *Client) DeleteVersion(ctx context.Context, p string, version int32) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, c.conn.Delete(c.abs(p), version) })
	return c.wrap(OpDelete, p, err)
}

// wrap turns go-zookeeper's error for op on p into an OpError, which names
// the path and the cause and keeps both visible to errors.Is. A cancelled
// context is the caller's own doing and stays as it is.
func (c *Client) wrap(op, p string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if IsConnectionLoss(err) && c.closedForAuth() {
		// The server refused an unauthenticated session in the reply to
		// whichever request reached it first (the keepalive's, maybe) and
		// then closed the connection under every other one: this request
		// was lost for the same reason.
		err = errSessionRequiresAuth
	}
	return &OpError{Op: op, Path: p, Err: err}
}

// closedForAuth reports whether a reply on this session said that the
// server demands authentication and closes the session.
func (c *Client) closedForAuth() bool {
	c.wire.mu.Lock()
	defer c.wire.mu.Unlock()
	return c.wire.authRequired
}

// GetW reads a node and leaves a data watch on it. Unlike an exists watch, a
// data watch is only set when the node exists, so waiting on a node that has
// just gone leaves nothing registered on the server.
func (c *Client) GetW(ctx context.Context, p string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	type r struct {
		data []byte
		st   *zk.Stat
		ch   <-chan zk.Event
	}
	res, err := call(ctx, func() (r, error) {
		data, st, ch, err := c.conn.GetW(c.abs(p))
		return r{data, st, ch}, err
	})
	return res.data, res.st, res.ch, c.wrap(OpRead, p, err)
}

// EnsureChroot creates the chroot's own nodes, as containers, when a lock
// path under it cannot be created because the chroot does not exist yet.
func (c *Client) EnsureChroot(ctx context.Context) error {
	if c.chroot == "" {
		return nil
	}
	p := ""
	for _, comp := range strings.Split(c.chroot[1:], "/") {
		p += "/" + comp
		_, err := call(ctx, func() (string, error) {
			return c.conn.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return c.wrap(OpCreate, p, err)
		}
	}
	return nil
}

// ChildrenW lists a node's children and leaves a child watch on it. A
// semaphore's mutex holder uses one, so there is never a herd on it; so do
// list --watch and holders --watch, one per node they list.
func (c *Client) ChildrenW(ctx context.Context, p string) ([]string, <-chan zk.Event, error) {
	type r struct {
		ch []string
		ev <-chan zk.Event
	}
	res, err := call(ctx, func() (r, error) {
		ch, _, ev, err := c.conn.ChildrenW(c.abs(p))
		return r{ch, ev}, err
	})
	return res.ch, res.ev, c.wrap(OpList, p, err)
}

// SetVersion writes a node's data only if its data version is still
// version (-1: at any version), and returns the new stat. ErrBadVersion
// says someone wrote first. The stat's Mtime is when the leader applied
// the write: the server's clock, which every host reads alike.
func (c *Client) SetVersion(ctx context.Context, p string, data []byte, version int32) (*zk.Stat, error) {
	st, err := call(ctx, func() (*zk.Stat, error) { return c.conn.Set(c.abs(p), data, version) })
	return st, c.wrap(OpWrite, p, err)
}
