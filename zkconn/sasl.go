package zkconn

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/jute"
)

// SASL on the wire.
//
// go-zookeeper has no SASL and no hook for it. zklock runs the exchange in a
// small layer of its own on each connection, below the wire tracker
// (wire.go): when the ConnectResponse of a granted session arrives, the
// layer holds its bytes back, runs the SASL exchange synchronously on the
// same connection, and only then hands the ConnectResponse to
// go-zookeeper. go-zookeeper is blocked reading that response, so nothing
// else writes meanwhile, and every request it sends afterwards finds the
// connection authenticated. This is cleaner than a fork or the upstream pull
// request's approach (both thread SASL state through the library's connect
// loop): it needs no change to the library, and it repeats by construction
// on every reconnect, including a session resumed on another server, as
// ZooKeeper requires (a server keeps SASL identities per connection).
//
// Because the exchange runs before the ConnectResponse is delivered:
//   - the handshake bound of wire.go (a deadline on the connection until the
//     response arrives) bounds the exchange too, and the keepalive's silence
//     check sees the ConnectRequest pending for the whole exchange;
//   - the loss arithmetic counts the connect's send time as the quorum's
//     contact (quorum.go); that moment precedes every SASL round trip, so
//     their time is already on the safe side of the count.
//
// The wire format, from ZooKeeper's ZooKeeperSaslClient and
// ZooKeeperServer.processSasl: each SASL token travels as a request with
// opcode 102 (OpCode.sasl) whose body is a GetSASLRequest (one jute buffer:
// int32 length, bytes); the server answers each with a reply header (xid,
// zxid, err) and a SetSASLResponse (one buffer). A failed exchange is
// answered with err AUTHFAILED (-115), or SESSIONCLOSEDREQUIRESASLAUTH
// (-124) when the server demands SASL, and the server closes the connection.

// codeAuthFailed is KeeperException.Code.AUTHFAILED.
const codeAuthFailed = -115

// maxSASLFrame bounds a frame read during the exchange: tokens are small
// (a Kerberos ticket is the largest, a few kilobytes).
const maxSASLFrame = 1 << 20

// SASLLogin is a way to log in with SASL. The mechanisms live in package
// zkconn/sasl (DIGEST-MD5, Kerberos, JAAS files), so that a program that
// needs no SASL does not link them (Kerberos is a large library).
type SASLLogin interface {
	// Mechanism is the SASL mechanism's name ("DIGEST-MD5", "GSSAPI").
	Mechanism() string
	// Principal is who logs in, safe to print.
	Principal() string
	// Exchange starts one exchange with the server at host (as the dialer
	// was given it).
	Exchange(host string) (SASLExchange, error)
}

// SASLCredentials is a SASLLogin with credentials of its own to get before
// any server is contacted (a Kerberos TGT). Dial gets them first, so that
// a wrong key or a missing KDC is named as such and not as a connect
// timeout.
type SASLCredentials interface {
	SASLLogin
	Login() error
}

// SASLExchange is one run of a mechanism's client side.
type SASLExchange interface {
	// Start returns the client's first token (empty when the server
	// speaks first).
	Start() ([]byte, error)
	// Next consumes the server's token. It returns the client's answer,
	// or done once the client is satisfied and has nothing more to send.
	Next(challenge []byte) (resp []byte, done bool, err error)
}

// ErrSASLRefused marks a SASL login the server, or the Kerberos KDC,
// refused: the credentials are wrong, expired, or not allowed. It is a
// permission error (errors.Is(err, ErrPermission) holds too).
var ErrSASLRefused = errors.New("SASL login refused")

// refusal is a refused login and its reason.
type refusal struct{ reason string }

func (e *refusal) Error() string { return e.reason }

func (e *refusal) Is(target error) bool { return target == ErrSASLRefused || target == ErrPermission }

// SASLRefused is a refused login (ErrSASLRefused), with its reason.
func SASLRefused(format string, args ...any) error {
	return &refusal{fmt.Sprintf(format, args...)}
}

// ErrSASLUnreachable marks a login that could not reach what it needs
// besides the server (a Kerberos KDC): ZooKeeper is as good as unavailable.
var ErrSASLUnreachable = errors.New("SASL login service unreachable")

// SASLError is a failed SASL login: which mechanism, as whom, and why.
type SASLError struct {
	Mechanism, Principal string
	Err                  error // a refusal, ErrSASLUnreachable, or what else went wrong
}

func (e *SASLError) Error() string {
	switch {
	case errors.Is(e.Err, ErrSASLRefused):
		return fmt.Sprintf("permission denied: SASL %s login as %q refused: %v", e.Mechanism, e.Principal, e.Err)
	case errors.Is(e.Err, ErrSASLUnreachable):
		return fmt.Sprintf("SASL %s login as %q: %v", e.Mechanism, e.Principal, e.Err)
	}
	return fmt.Sprintf("SASL %s login as %q failed: %v", e.Mechanism, e.Principal, e.Err)
}

func (e *SASLError) Unwrap() error { return e.Err }

// saslConn runs the SASL exchange on one connection (see above).
type saslConn struct {
	net.Conn
	login SASLLogin
	host  string
	// failed is told of every failed exchange; the Client decides whether
	// it ends the session.
	failed func(error)

	// Only go-zookeeper's reader touches these, and its reads never
	// overlap.
	started bool
	held    []byte // the ConnectResponse frame, length included, still to deliver
}

func newSASLConn(conn net.Conn, login SASLLogin, address string, failed func(error)) *saslConn {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	return &saslConn{Conn: conn, login: login, host: host, failed: failed}
}

func (c *saslConn) Read(b []byte) (int, error) {
	if !c.started {
		c.started = true
		frame, err := readFrame(c.Conn)
		if err != nil {
			return 0, err
		}
		// ConnectResponse: int32 protocolVersion, int32 timeOut, int64
		// sessionId, …; a zero session id refuses to resume an expired
		// session, and there is nothing to authenticate.
		if len(frame) >= 4+16 && binary.BigEndian.Uint64(frame[12:20]) != 0 {
			if err := c.authenticate(); err != nil {
				err = &SASLError{Mechanism: c.login.Mechanism(), Principal: c.login.Principal(), Err: err}
				c.failed(err)
				return 0, err
			}
		}
		c.held = frame
	}
	if len(c.held) > 0 {
		n := copy(b, c.held)
		c.held = c.held[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// authenticate runs the whole exchange: send a token, read the server's,
// until the mechanism is done. Every token the client sends gets exactly one
// reply, and the last reply is read before go-zookeeper sees the
// connection, so no SASL bytes are left for it.
func (c *saslConn) authenticate() error {
	mech, err := c.login.Exchange(c.host)
	if err != nil {
		return err
	}
	tok, err := mech.Start()
	if err != nil {
		return err
	}
	for xid := int32(1); ; xid++ {
		reply, err := c.roundTrip(xid, tok)
		if err != nil {
			return err
		}
		resp, done, err := mech.Next(reply)
		if err != nil {
			if errors.Is(err, ErrSASLRefused) {
				return err
			}
			return SASLRefused("%v", err)
		}
		if done {
			if resp != nil {
				return errors.New("the mechanism finished with a token still to send")
			}
			return nil
		}
		tok = resp
	}
}

// roundTrip sends one SASL token and returns the server's answer. The xids
// need not follow go-zookeeper's: the server only echoes them.
func (c *saslConn) roundTrip(xid int32, tok []byte) ([]byte, error) {
	req := make([]byte, 4+4+4+4+len(tok))
	binary.BigEndian.PutUint32(req[0:], uint32(len(req)-4))
	binary.BigEndian.PutUint32(req[4:], uint32(xid))
	binary.BigEndian.PutUint32(req[8:], uint32(jute.OpSASL))
	binary.BigEndian.PutUint32(req[12:], uint32(len(tok)))
	copy(req[16:], tok)
	if _, err := c.Conn.Write(req); err != nil {
		return nil, &saslWireError{err}
	}
	frame, err := readFrame(c.Conn)
	if err != nil {
		return nil, &saslWireError{err}
	}
	body := frame[4:]
	if len(body) < 16 {
		return nil, fmt.Errorf("SASL exchange: short reply (%d bytes)", len(body))
	}
	if got := int32(binary.BigEndian.Uint32(body[0:4])); got != xid {
		return nil, fmt.Errorf("SASL exchange: reply to xid %d, want %d", got, xid)
	}
	switch code := int32(binary.BigEndian.Uint32(body[12:16])); code {
	case 0:
	case codeAuthFailed, codeSessionRequiresAuth:
		return nil, SASLRefused("the server rejected the credentials")
	default:
		return nil, fmt.Errorf("SASL exchange: the server answered with error %d", code)
	}
	body = body[16:]
	if len(body) < 4 {
		return []byte{}, nil
	}
	n := int32(binary.BigEndian.Uint32(body[0:4]))
	if n < 0 {
		return []byte{}, nil // a null buffer
	}
	if int(n) > len(body)-4 {
		return nil, fmt.Errorf("SASL exchange: token of %d bytes in a %d-byte reply", n, len(body))
	}
	return body[4 : 4+n], nil
}

// readFrame reads one length-prefixed frame and returns it, length
// included.
func readFrame(r io.Reader) ([]byte, error) {
	frame, err := jute.ReadFrame(r, maxSASLFrame)
	var big *jute.FrameTooLargeError
	if errors.As(err, &big) {
		return nil, fmt.Errorf("%w during the SASL exchange", err)
	}
	if err != nil {
		return nil, err
	}
	return frame, nil
}

// saslWireError is an exchange cut short by the connection, not refused:
// the next server may well complete it.
type saslWireError struct{ err error }

func (e *saslWireError) Error() string { return "SASL exchange: " + e.err.Error() }
func (e *saslWireError) Unwrap() error { return e.err }

// saslFailed is called by a saslConn whose exchange failed. Before the
// first session is up, any failure but a dropped connection ends Dial: a
// refused login stays refused (exit 77), and an unreachable KDC or a bad
// key is better named now than as a connect timeout. Later only a refused
// login ends the session: no server will take this client any more, so the
// lock could not be kept; after other failures (the KDC down for a moment)
// go-zookeeper tries the next server, as after any failed connect.
func (c *Client) saslFailed(err error) {
	c.debugf("%v", err)
	var wire *saslWireError
	if errors.Is(err, ErrSASLRefused) || (!c.sess.established() && !errors.As(err, &wire)) {
		c.sess.fail(err)
	}
}

// saslLogin gets a login's own credentials before any server is
// contacted, for the logins that have any (a Kerberos TGT), unless ctx
// ends first. Kerberos's login takes no context and tries each KDC of the
// realm in turn, UDP then TCP, seconds each: it runs on a goroutine of its
// own, so that a signal ends zklock at once rather than after the KDCs'
// timeouts. Given up on, that goroutine ends with those timeouts, and its
// result is dropped (the login keeps whatever credentials it got).
func saslLogin(ctx context.Context, l SASLLogin) error {
	p, ok := l.(SASLCredentials)
	if !ok {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- p.Login() }()
	select {
	case err := <-done:
		if err != nil {
			return &SASLError{Mechanism: l.Mechanism(), Principal: l.Principal(), Err: err}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// acl is the ACL of the nodes this client creates: the creator's whenever
// the client authenticates, by digest (see Auth.ACL), SASL or its TLS
// certificate (x509.go).
func (o Options) acl() ([]zk.ACL, error) {
	switch {
	case o.Auth != nil && o.Auth.Scheme == SchemeX509:
		if o.TLS == nil || len(o.TLS.Certificates) == 0 {
			return nil, fmt.Errorf("%w: x509 auth needs a TLS client certificate", ErrBadAuth)
		}
		return x509ACL(o.TLS.Certificates[0].Certificate)
	case o.Auth == nil && o.SASL != nil:
		return (&Auth{}).ACL(), nil
	}
	return o.Auth.ACL(), nil
}
