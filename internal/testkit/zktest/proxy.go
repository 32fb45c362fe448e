package zktest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// ZooKeeper request opcodes, for Proxy.DropReplyAfter.
const (
	OpCreate          = jute.OpCreate
	OpDelete          = jute.OpDelete
	OpExists          = jute.OpExists
	OpGetData         = jute.OpGetData
	OpSetData         = jute.OpSetData
	OpGetChildren2    = jute.OpGetChildren2
	OpMulti           = jute.OpMulti
	OpCreate2         = jute.OpCreate2
	OpCreateContainer = jute.OpCreateContainer
	OpCloseSession    = jute.OpCloseSession
)

// maxFrame is the largest length prefix treated as a ZooKeeper frame. A
// four-letter command sent through the proxy starts with four ASCII
// letters, which read as a length of over a billion; anything that large
// (or negative) switches the connection to plain byte forwarding.
const maxFrame = 64 << 20

// Proxy is a TCP proxy on 127.0.0.1 in front of one ZooKeeper server, for
// injecting network faults between a client and the server. All methods
// are safe for concurrent use.
//
// It understands just enough of the ZooKeeper wire protocol (length-
// prefixed frames, the xid and opcode at the start of each request, the xid
// at the start of each reply) to drop one specific reply; otherwise it
// forwards bytes unchanged.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	cut       bool
	blackhole bool
	delay     time.Duration
	// jitter and the hold-back pattern shape each chunk's own delay
	// when it is read (see SetJitter, HoldBack).
	jitter    time.Duration
	holdEvery int
	holdExtra time.Duration
	changed   chan struct{} // closed and replaced on every state change
	conns     map[*proxyConn]struct{}
	trapArmed bool
	trapOp    int32
	trapFired chan struct{}
	// swallow: SwallowRequest's trap, armed for swallowOp.
	swallowArmed bool
	swallowOp    int32
	swallowed    chan struct{}

	// raw forwards bytes without looking for client frames: the servers'
	// own protocols are not framed the way client traffic is, and reading
	// them as frames could wait for bytes that never come.
	raw bool
	// greet, if set, reads the connecting side's opening message and
	// returns the bytes to forward in its place (see peers.go).
	greet func(*bufio.Reader) ([]byte, error)
}

// NewProxyT is NewProxy for a test: it fails the test on error and closes
// the proxy when the test ends.
func NewProxyT(tb TB, target string) *Proxy {
	tb.Helper()
	p, err := NewProxy(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// NewProxy listens on a free loopback port and forwards every accepted
// connection to target.
func NewProxy(target string) (*Proxy, error) {
	return listenProxy(target, false, nil)
}

func listenProxy(target string, raw bool, greet func(*bufio.Reader) ([]byte, error)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("zktest: proxy listen: %w", err)
	}
	p := &Proxy{
		target:    target,
		ln:        ln,
		changed:   make(chan struct{}),
		conns:     map[*proxyConn]struct{}{},
		trapFired: make(chan struct{}),
		raw:       raw,
		greet:     greet,
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the address clients should connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to finish. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.snapshotConnsLocked()
	p.notifyLocked()
	p.mu.Unlock()
	err := p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
	return err
}

// Cut closes every live connection and, until Heal, closes new ones as
// soon as they are accepted: the client sees its connection drop and every
// reconnect attempt fail, as if the server were unreachable.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	conns := p.snapshotConnsLocked()
	p.notifyLocked()
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Blackhole keeps connections open (and accepts new ones) but silently
// discards all bytes in both directions until Heal: the client sees
// silence rather than a reset, as in a network partition, and has to rely
// on its own timeouts. End-of-stream is not passed on either, so the
// server does not learn that a client went away.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.blackhole = true
	p.notifyLocked()
	p.mu.Unlock()
}

// SetDelay delays forwarding of everything, in both directions, by d
// (measured from when the proxy received it). Zero turns delay off. A
// change applies to data already waiting in the proxy too.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.notifyLocked()
	p.mu.Unlock()
}

// SetJitter adds to the delay of each chunk read from now on a random
// extra, uniform in [0, j), in both directions; zero turns it off. Chunks
// still leave in order, as on a TCP connection: a chunk that drew a long
// extra holds back the ones behind it.
func (p *Proxy) SetJitter(j time.Duration) {
	p.mu.Lock()
	p.jitter = j
	p.mu.Unlock()
}

// HoldBack delays every nth chunk read from now on, in each direction of
// each connection (the nth, the 2nth, …, counted from the connection's
// first), by extra on top of the delay, and the chunks behind it with it:
// what a TCP segment lost and retransmitted costs. n = 0 turns it off. The
// pattern is fixed rather than random so that a test knows which chunk it
// hits: with n = 2, the ConnectRequest and ConnectResponse pass, and the
// first request and its reply are held back.
func (p *Proxy) HoldBack(n int, extra time.Duration) {
	p.mu.Lock()
	p.holdEvery, p.holdExtra = n, extra
	p.mu.Unlock()
}

// extra is the delay, on top of the proxy's, of the nth chunk read in one
// direction of a connection.
func (p *Proxy) extra(n int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var d time.Duration
	if p.jitter > 0 {
		d = rand.N(p.jitter)
	}
	if p.holdEvery > 0 && n%p.holdEvery == 0 {
		d += p.holdExtra
	}
	return d
}

// Heal restores normal forwarding: new connections are accepted again,
// and existing ones stop being blackholed or delayed (jitter and held-back
// chunks end for the chunks read from then on). It also disarms a
// DropReplyAfter trap that has not caught a request yet. Connections closed
// by Cut stay closed; clients must reconnect.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.blackhole = false
	p.delay = 0
	p.jitter = 0
	p.holdEvery = 0
	p.trapArmed = false
	p.swallowArmed = false
	p.notifyLocked()
	p.mu.Unlock()
}

// DropReplyAfter arms a one-shot trap for the next request with the given
// opcode (OpCreate, OpCreate2, ...) on any connection. That request is
// forwarded to the server as usual; when the server's reply to it (same
// xid) arrives, the proxy discards the reply and closes both sides of the
// connection. The server has then applied the request but the client never
// learns the outcome - the situation a GUID-protected create exists for.
// The returned channel (also returned by Fired until the next arming) is
// closed when the trap has fired. Later connections are forwarded normally.
//
// If the connection dies before the reply arrives the trap is re-armed.
func (p *Proxy) DropReplyAfter(opcode int32) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trapArmed = true
	p.trapOp = opcode
	p.trapFired = make(chan struct{})
	return p.trapFired
}

// SwallowRequest arms a one-shot trap for the next request with the given
// opcode (OpCloseSession, ...) on any connection: that request, and
// everything the client sends after it on that connection, is discarded,
// while the connection stays open. The server never hears of the request,
// as if it died with its server on the way; the client waits for a reply
// that never comes, until Cut or Close. The returned channel is closed
// when the trap has caught its request. Heal disarms a trap that has not.
func (p *Proxy) SwallowRequest(opcode int32) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.swallowArmed = true
	p.swallowOp = opcode
	p.swallowed = make(chan struct{})
	return p.swallowed
}

// Fired returns the channel of the most recently armed DropReplyAfter trap;
// it is closed once that trap has fired.
func (p *Proxy) Fired() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trapFired
}

// Conns is the number of live proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *Proxy) snapshotConnsLocked() []*proxyConn {
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	return cs
}

// notifyLocked wakes every goroutine waiting for a state change.
func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// state returns what a forwarding goroutine needs to know, plus a channel
// that is closed on the next change.
func (p *Proxy) state() (blackhole bool, delay time.Duration, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blackhole, p.delay, p.changed
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		p.mu.Lock()
		if p.closed || p.cut {
			p.mu.Unlock()
			conn.Close()
			continue
		}
		c := &proxyConn{p: p, client: conn, done: make(chan struct{})}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go c.run()
	}
}

// proxyConn is one client connection and its connection to the server.
type proxyConn struct {
	p      *Proxy
	client net.Conn
	done   chan struct{} // closed by close
	once   sync.Once

	mu          sync.Mutex
	server      net.Conn
	swallowing  bool // SwallowRequest caught a request here: discard the rest
	trapPending bool
	trapXid     int32
	trapFired   chan struct{}
	trapDone    bool
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.mu.Lock()
		if c.server != nil {
			c.server.Close()
		}
		pending, fired := c.trapPending && !c.trapDone, c.trapFired
		c.mu.Unlock()
		c.p.mu.Lock()
		delete(c.p.conns, c)
		// The caught request may never have reached the server: re-arm
		// unless a newer trap replaced this one.
		if pending && c.p.trapFired == fired && !c.p.trapArmed {
			c.p.trapArmed = true
		}
		c.p.mu.Unlock()
	})
}

func (c *proxyConn) run() {
	defer c.p.wg.Done()
	server, err := c.dial()
	if err != nil {
		c.close()
		return
	}
	c.mu.Lock()
	c.server = server
	c.mu.Unlock()
	select {
	case <-c.done: // closed (Cut, Close) while dialling
		server.Close()
		return
	default:
	}
	// Four goroutines: a reader and a writer per direction, joined by a
	// channel that doubles as the delay line. When both directions have
	// ended (each side closed its half), the connection is done.
	var wg sync.WaitGroup
	wg.Add(4)
	up := make(chan chunk, 64)
	down := make(chan chunk, 64)
	go c.read(&wg, c.client, up, true)
	go c.write(&wg, server, up)
	go c.read(&wg, server, down, false)
	go c.write(&wg, c.client, down)
	wg.Wait()
	c.close()
}

// peerDialPatience is how long a peer proxy keeps trying to reach its
// target. Its listener has already accepted the connection (the kernel
// does that before anyone asks the target), so a refused connect would
// reach the server as an accepted connection that closes at once. A
// follower retries a refused connect to its new leader, whose quorum port
// opens a moment after the election, but it gives up on one that closes.
const peerDialPatience = 3 * time.Second

// dial connects to the target; a peer proxy keeps trying for
// peerDialPatience unless the connection is closed meanwhile.
func (c *proxyConn) dial() (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	giveUp := time.Now().Add(peerDialPatience)
	for {
		server, err := d.Dial("tcp", c.p.target)
		if err == nil || !c.p.raw || time.Now().After(giveUp) {
			return server, err
		}
		select {
		case <-c.done:
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// chunk is a unit of forwarding: one ZooKeeper frame, or raw bytes once a
// connection is found not to speak the framed protocol.
type chunk struct {
	data []byte
	at   time.Time
	// extra is this chunk's own delay on top of the proxy's (jitter, a
	// held-back chunk).
	extra time.Duration
}

// read reads frames from src and queues them for the writer. fromClient
// selects which way the frames are parsed for the DropReplyAfter trap.
func (c *proxyConn) read(wg *sync.WaitGroup, src net.Conn, out chan<- chunk, fromClient bool) {
	defer wg.Done()
	defer close(out)
	fr := frameReader{r: bufio.NewReaderSize(src, 64<<10), first: true, raw: c.p.raw}
	if fromClient && c.p.greet != nil {
		data, err := c.p.greet(fr.r)
		if blackhole, _, _ := c.p.state(); !blackhole && len(data) > 0 {
			select {
			case out <- chunk{data: data, at: time.Now()}:
			case <-c.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
	n := 0 // chunks read in this direction
	for {
		data, framed, err := fr.next()
		if len(data) > 0 {
			n++
			if blackhole, _, _ := c.p.state(); !blackhole {
				if framed && !fr.first {
					if fromClient {
						c.inspectRequest(data)
					} else if c.inspectReply(data) {
						return // trap fired; connection closed
					}
				}
				if fromClient && c.swallow(data, framed && !fr.first) {
					fr.first = false
					if err != nil {
						return
					}
					continue
				}
				select {
				case out <- chunk{data: data, at: time.Now(), extra: c.p.extra(n)}:
				case <-c.done:
					return
				}
			}
		}
		fr.first = false
		if err != nil {
			return
		}
	}
}

// write forwards chunks to dst, honouring delay and blackhole. When the
// reader ends (source closed its side) it passes the half-close on, unless
// blackholed, in which case it waits: in a partition no FIN gets through.
func (c *proxyConn) write(wg *sync.WaitGroup, dst net.Conn, in <-chan chunk) {
	defer wg.Done()
	for ch := range in {
		for {
			blackhole, delay, changed := c.p.state()
			if blackhole {
				break
			}
			wait := time.Until(ch.at.Add(delay + ch.extra))
			if wait <= 0 {
				if _, err := dst.Write(ch.data); err != nil {
					c.close()
					return
				}
				break
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-changed:
			case <-c.done:
				t.Stop()
				return
			}
			t.Stop()
		}
	}
	for {
		blackhole, _, changed := c.p.state()
		if !blackhole {
			break
		}
		select {
		case <-changed:
		case <-c.done:
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// inspectRequest springs an armed trap on a request with the trapped
// opcode. It runs before the request is queued for the server, so the
// reply cannot overtake it.
func (c *proxyConn) inspectRequest(frame []byte) {
	if len(frame) < 12 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(frame[4:8]))
	op := int32(binary.BigEndian.Uint32(frame[8:12]))
	p := c.p
	p.mu.Lock()
	if !p.trapArmed || op != p.trapOp {
		p.mu.Unlock()
		return
	}
	p.trapArmed = false
	fired := p.trapFired
	p.mu.Unlock()
	c.mu.Lock()
	c.trapPending, c.trapDone, c.trapXid, c.trapFired = true, false, xid, fired
	c.mu.Unlock()
}

// swallow reports whether a chunk from the client is to be discarded: it
// is a request SwallowRequest's trap catches, or comes after one.
func (c *proxyConn) swallow(data []byte, request bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.swallowing {
		return true
	}
	if !request || len(data) < 12 {
		return false
	}
	op := int32(binary.BigEndian.Uint32(data[8:12]))
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.swallowArmed || op != p.swallowOp {
		return false
	}
	p.swallowArmed = false
	c.swallowing = true
	close(p.swallowed)
	return true
}

// inspectReply reports whether frame is the reply the trap waits for; if
// so it closes the connection and signals that the trap fired.
func (c *proxyConn) inspectReply(frame []byte) bool {
	if len(frame) < 8 {
		return false
	}
	xid := int32(binary.BigEndian.Uint32(frame[4:8]))
	c.mu.Lock()
	hit := c.trapPending && !c.trapDone && xid == c.trapXid
	if hit {
		c.trapDone = true
	}
	fired := c.trapFired
	c.mu.Unlock()
	if !hit {
		return false
	}
	c.close()
	close(fired)
	return true
}

// frameReader splits a stream into ZooKeeper frames (a 4-byte big-endian
// length followed by that many bytes). The first frame on a connection is
// the ConnectRequest or ConnectResponse, which has no xid; first tells the
// caller so. A length that cannot be a frame switches to raw mode.
type frameReader struct {
	r     *bufio.Reader
	raw   bool
	first bool
}

// next returns the next frame (framed=true) or raw chunk, and any error
// that ended the stream after it.
func (f *frameReader) next() (data []byte, framed bool, err error) {
	if f.raw {
		buf := make([]byte, 32<<10)
		n, err := f.r.Read(buf)
		return buf[:n], false, err
	}
	frame, err := jute.ReadFrame(f.r, maxFrame)
	var big *jute.FrameTooLargeError
	if errors.As(err, &big) {
		f.raw = true
		return frame, false, nil
	}
	return frame, err == nil, err
}
