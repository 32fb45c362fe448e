package zktest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func proxyT(t *testing.T) *Proxy {
	t.Helper()
	p, err := NewProxy(shared(t).Server(0).Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if n := p.Conns(); n != 0 {
			t.Errorf("%d connections left after Close", n)
		}
	})
	return p
}

// rawFourLetter sends a four-letter word through addr on a plain
// connection, exercising the proxy's non-ZooKeeper (raw) mode.
func rawFourLetter(t *testing.T, addr, cmd string, timeout time.Duration) (string, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

func TestFrameReader(t *testing.T) {
	var buf bytes.Buffer
	frame := func(body ...byte) {
		binary.Write(&buf, binary.BigEndian, int32(len(body)))
		buf.Write(body)
	}
	frame(1, 2, 3)
	frame()
	frame(9, 9, 9, 9, 9, 9, 9, 9)
	buf.WriteString("ruok and then some raw bytes")
	fr := frameReader{r: bufio.NewReader(&buf), first: true}
	var got []string
	for {
		data, framed, err := fr.next()
		if len(data) > 0 {
			got = append(got, strings.TrimSpace(strings.Repeat("F", btoi(framed))+" "+string(rune('0'+len(data)))))
		}
		if err != nil {
			break
		}
	}
	// Three frames (7, 4 and 12 bytes with their length prefix), then the
	// bogus "length" "ruok" and the rest as raw bytes.
	want := []string{"F 7", "F 4", "F <", "4", string(rune('0' + len(" and then some raw bytes")))}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestProxyForwards(t *testing.T) {
	p := proxyT(t)
	c, _ := connect(t, []string{p.Addr()}, 4*time.Second)
	if _, err := c.Create("/via-proxy", []byte("hello"), 0, acl); err != nil {
		t.Fatal(err)
	}
	defer c.Delete("/via-proxy", -1)
	if b, _, err := c.Get("/via-proxy"); err != nil || string(b) != "hello" {
		t.Fatalf("get: %q %v", b, err)
	}
	if n := p.Conns(); n != 1 {
		t.Fatalf("Conns = %d, want 1", n)
	}
	// Four-letter words are not framed; the proxy passes them through.
	if out, err := rawFourLetter(t, p.Addr(), "ruok", 5*time.Second); err != nil || out != "imok" {
		t.Fatalf("ruok via proxy: %q %v", out, err)
	}
	if out, err := fourLetter(testCtx(t), p.Addr(), "srvr"); err != nil || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("srvr via proxy: %q %v", out, err)
	}
	Eventually(t, 5*time.Second, "four-letter connections to close", func() bool { return p.Conns() == 1 })
}

func TestProxyCut(t *testing.T) {
	p := proxyT(t)
	c, ev := connect(t, []string{p.Addr()}, 10*time.Second)
	sid := c.SessionID()

	p.Cut()
	waitState(t, ev, zk.StateDisconnected, 5*time.Second)
	if n := p.Conns(); n != 0 {
		t.Fatalf("Conns = %d after Cut", n)
	}
	// New connections are accepted and closed at once (EOF or reset).
	if out, err := rawFourLetter(t, p.Addr(), "ruok", 5*time.Second); out != "" {
		t.Fatalf("ruok through a cut proxy: %q %v", out, err)
	}

	p.Heal()
	waitState(t, ev, zk.StateHasSession, 10*time.Second)
	if c.SessionID() != sid {
		t.Fatalf("session changed from %x to %x", sid, c.SessionID())
	}
	if _, _, err := c.Exists("/"); err != nil {
		t.Fatal(err)
	}
}

func TestProxyBlackholeRaw(t *testing.T) {
	p := proxyT(t)
	p.Blackhole()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("ruok"))
	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var b [16]byte
	n, err := conn.Read(b[:])
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("blackholed read: %q %v, want silence (timeout)", b[:n], err)
	}
	if p.Conns() != 1 {
		t.Fatalf("Conns = %d, want 1: blackhole must not close", p.Conns())
	}
	// After Heal the connection carries data again (the first ruok is lost).
	p.Heal()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	conn.Write([]byte("ruok"))
	out, err := io.ReadAll(conn)
	if err != nil || string(out) != "imok" {
		t.Fatalf("after Heal: %q %v", out, err)
	}
}

// Under a blackhole the client hears nothing, the server hears nothing,
// and the session expires on the server side.
func TestProxyBlackholeSessionExpires(t *testing.T) {
	p := proxyT(t)
	c, ev := connect(t, []string{p.Addr()}, time.Second)
	eph, err := c.Create("/blackholed-eph", nil, zk.FlagEphemeral, acl)
	if err != nil {
		t.Fatal(err)
	}
	direct, _ := connect(t, []string{shared(t).Server(0).Addr()}, 4*time.Second)

	p.Blackhole()
	t0 := time.Now()
	waitState(t, ev, zk.StateDisconnected, 5*time.Second)
	t.Logf("client noticed silence after %v", time.Since(t0))
	Eventually(t, 10*time.Second, "session expiry to remove the ephemeral", func() bool {
		ok, _, err := direct.Exists(eph)
		return err == nil && !ok
	})
	t.Logf("server expired the session after %v", time.Since(t0))
	p.Heal()
	waitState(t, ev, zk.StateExpired, 10*time.Second)
}

func TestProxyDelay(t *testing.T) {
	p := proxyT(t)
	c, _ := connect(t, []string{p.Addr()}, 10*time.Second)
	rtt := func() time.Duration {
		t0 := time.Now()
		if _, _, err := c.Exists("/"); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	base := rtt()
	p.SetDelay(150 * time.Millisecond)
	if d := rtt(); d < 300*time.Millisecond {
		t.Fatalf("round trip %v with 150ms each way (baseline %v)", d, base)
	}
	// Lifting the delay releases data already held back.
	p.SetDelay(5 * time.Second)
	done := make(chan time.Duration, 1)
	go func() { done <- rtt() }()
	time.Sleep(200 * time.Millisecond)
	p.Heal()
	select {
	case d := <-done:
		if d > 3*time.Second {
			t.Fatalf("held request took %v", d)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("Heal did not release delayed data")
	}
	if d := rtt(); d > 250*time.Millisecond {
		t.Fatalf("round trip %v after Heal", d)
	}
}

// TestProxyHoldBack: with every second chunk held back, the first
// request after the handshake and its reply are late, the next ones are
// not, and so on; jitter delays each chunk by less than its bound.
func TestProxyHoldBack(t *testing.T) {
	p := proxyT(t)
	p.HoldBack(2, 300*time.Millisecond)
	c, _ := connect(t, []string{p.Addr()}, 10*time.Second)
	rtt := func() time.Duration {
		t0 := time.Now()
		if _, _, err := c.Exists("/"); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	// Chunk 2 each way: the request and its reply, held back 300ms each.
	if d := rtt(); d < 600*time.Millisecond {
		t.Errorf("first request: round trip %v, want the request and reply held back 300ms each", d)
	}
	if d := rtt(); d > 250*time.Millisecond {
		t.Errorf("second request: round trip %v, want it not held back", d)
	}
	if d := rtt(); d < 600*time.Millisecond {
		t.Errorf("third request: round trip %v, want it held back", d)
	}
	p.HoldBack(0, 0)
	p.SetJitter(100 * time.Millisecond)
	for range 5 {
		if d := rtt(); d > 450*time.Millisecond {
			t.Errorf("round trip %v with a jitter below 100ms each way", d)
		}
	}
}

// The GUID-protected-create situation: the server applies the create, the
// client only sees its connection drop.
func TestProxyDropReplyAfterCreate(t *testing.T) {
	p := proxyT(t)
	c, ev := connect(t, []string{p.Addr()}, 10*time.Second)
	sid := c.SessionID()
	direct, _ := connect(t, []string{shared(t).Server(0).Addr()}, 4*time.Second)

	fired := p.DropReplyAfter(OpCreate)
	if p.Fired() != fired {
		t.Fatal("Fired does not return the armed trap's channel")
	}
	_, err := c.Create("/dropped-reply", []byte("applied"), 0, acl)
	if err != zk.ErrConnectionClosed {
		t.Fatalf("create through trap: %v, want %v", err, zk.ErrConnectionClosed)
	}
	defer direct.Delete("/dropped-reply", -1)
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("trap did not report firing")
	}
	if b, _, err := direct.Get("/dropped-reply"); err != nil || string(b) != "applied" {
		t.Fatalf("server does not have the node: %q %v", b, err)
	}

	// One-shot: the client reconnects to the same session and creates work.
	waitState(t, ev, zk.StateHasSession, 10*time.Second)
	if c.SessionID() != sid {
		t.Fatalf("session changed")
	}
	if _, err := c.Create("/after-trap", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
}

// go-zookeeper's own protected create recovers from exactly this fault by
// finding its GUID among the children; exactly one node results.
func TestProxyDropReplyProtectedCreate(t *testing.T) {
	p := proxyT(t)
	c, _ := connect(t, []string{p.Addr()}, 10*time.Second)
	if _, err := c.Create("/protected", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	defer c.Delete("/protected", -1)
	fired := p.DropReplyAfter(OpCreate)
	path, err := c.CreateProtectedEphemeralSequential("/protected/lock-", nil, acl)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Delete(path, -1)
	select {
	case <-fired:
	default:
		t.Fatal("trap did not fire")
	}
	kids, _, err := c.Children("/protected")
	if err != nil || len(kids) != 1 || "/protected/"+kids[0] != path {
		t.Fatalf("children %v (%v), created %s", kids, err, path)
	}
}

func TestProxyDropReplyOtherOpcode(t *testing.T) {
	p := proxyT(t)
	c, _ := connect(t, []string{p.Addr()}, 10*time.Second)
	fired := p.DropReplyAfter(OpCreateContainer)
	// Requests with other opcodes pass.
	if _, err := c.Create("/ctr-plain", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer("/ctr", nil, zk.FlagContainer, acl); err != zk.ErrConnectionClosed {
		t.Fatalf("container create: %v", err)
	}
	<-fired
	direct, _ := connect(t, []string{shared(t).Server(0).Addr()}, 4*time.Second)
	if ok, _, err := direct.Exists("/ctr"); err != nil || !ok {
		t.Fatalf("container not created: %v %v", ok, err)
	}
	// An empty container that never had children is not reaped by default.
	direct.Delete("/ctr", -1)
}

func TestProxyHealDisarms(t *testing.T) {
	p := proxyT(t)
	c, _ := connect(t, []string{p.Addr()}, 10*time.Second)
	fired := p.DropReplyAfter(OpCreate)
	p.Heal()
	if _, err := c.Create("/disarmed", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fired:
		t.Fatal("disarmed trap fired")
	default:
	}
}

func TestProxyCloseIdempotent(t *testing.T) {
	p, err := NewProxy(shared(t).Server(0).Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	Eventually(t, 5*time.Second, "connection to register", func() bool { return p.Conns() == 1 })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection survived Close")
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("closed proxy still accepts")
	}
}
