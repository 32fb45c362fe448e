package zkconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// lazy is the server the package's tests share, started by the first
// test that needs it. tickTime 200ms: sessions may last 400ms to 8s here.
var lazy = zktest.Lazy{Options: zktest.Options{MaxSessionTimeout: 8 * time.Second}}

func TestMain(m *testing.M) {
	code := m.Run()
	lazy.Stop()
	os.Exit(code)
}

// server is the shared server; under -short the test is skipped.
func server(t testing.TB) *zktest.Cluster {
	t.Helper()
	return lazy.Need(t)
}

func dialT(t *testing.T, servers []string, timeout time.Duration) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, Options{ConnString: ConnString{Servers: servers}, SessionTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestNegotiatedTimeout: the server clamps the requested timeout, and the
// client learns the clamped value from the wire.
func TestNegotiatedTimeout(t *testing.T) {
	for _, tc := range []struct{ ask, want time.Duration }{
		{3 * time.Second, 3 * time.Second},
		{100 * time.Millisecond, 400 * time.Millisecond},
		{time.Minute, 8 * time.Second},
	} {
		c := dialT(t, server(t).Addrs(), tc.ask)
		if got := c.NegotiatedTimeout(); got != tc.want {
			t.Errorf("asked %s: negotiated %s, want %s", tc.ask, got, tc.want)
		}
	}
}

// TestLastHeard: it follows the traffic (go-zookeeper pings every third of
// the timeout) while the server answers, and stops moving when the server
// falls silent.
func TestLastHeard(t *testing.T) {
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	c := dialT(t, []string{proxy.Addr()}, 3*time.Second)
	first := c.LastHeard()
	if first.IsZero() || time.Since(first) > time.Second {
		t.Fatalf("LastHeard right after connecting = %v", first)
	}
	ctx := context.Background()
	before := time.Now()
	if _, err := c.Children(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if lh := c.LastHeard(); lh.Before(before) {
		t.Errorf("LastHeard %v is older than a request answered after %v", lh, before)
	}
	proxy.Blackhole()
	silentFrom := time.Now()
	time.Sleep(1500 * time.Millisecond) // longer than the 1s ping interval
	if lh := c.LastHeard(); lh.After(silentFrom) {
		t.Errorf("LastHeard %v moved while the server was silent (since %v)", lh, silentFrom)
	}
	proxy.Heal()
	zktest.Eventually(t, 5*time.Second, "LastHeard to move again", func() bool {
		return c.LastHeard().After(silentFrom)
	})
	select {
	case <-c.Lost():
		t.Fatalf("a 1.5s silence lost a 3s session: %v", c.LostErr())
	default:
	}
}

// TestSessionLost: when the server expires the session while the client is
// cut off, the client reports it as lost once it is back, and go-zookeeper's
// silent replacement session does not count as the same session.
func TestSessionLost(t *testing.T) {
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	c, mark := markedSession(t, proxy.Addr(), 800*time.Millisecond)
	id := c.SessionID()
	proxy.Cut()
	conn := zktest.DialT(t, server(t).Addrs())
	zktest.Eventually(t, 10*time.Second, "the server to expire the session", func() bool {
		ok, _, err := conn.Exists(mark)
		return err == nil && !ok
	})
	proxy.Heal()
	select {
	case <-c.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("session loss not reported")
	}
	if err := c.LostErr(); !errors.Is(err, ErrSessionLost) {
		t.Errorf("LostErr = %v", err)
	}
	if c.SessionID() != id {
		t.Errorf("SessionID changed from 0x%x to 0x%x: it must stay the one we owned", id, c.SessionID())
	}
	if err := c.WaitSession(context.Background()); !errors.Is(err, ErrSessionLost) {
		t.Errorf("WaitSession after loss = %v", err)
	}
}

// markedSession dials a session through addr and creates an ephemeral
// node named after it. The server deletes that node when it expires the
// session: waiting for that, not for a fixed time past the timeout, is
// what makes a test's heal come after the expiry on a loaded machine.
//
// With a sub-second timeout, a client starved of the CPU for a few
// hundred milliseconds misses its pings: the connection drops (the create
// is then tried again on the same session; its node, named after the
// session, may already be there), or the session itself is lost before
// the test has begun (then it starts again with a new one). Neither is
// what the test is about, and both are what the client must do.
func markedSession(t *testing.T, addr string, timeout time.Duration) (*Client, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		c := dialT(t, []string{addr}, timeout)
		mark := fmt.Sprintf("/session-lost-%x", c.SessionID())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		for {
			_, err = c.Create(ctx, mark, nil, zk.FlagEphemeral)
			if errors.Is(err, zk.ErrNodeExists) {
				err = nil
			}
			if err == nil || IsSessionLoss(err) || ctx.Err() != nil {
				break
			}
			t.Logf("create %s: %v; again once the session is back", mark, err)
			if err = c.WaitSession(ctx); err != nil {
				break
			}
		}
		cancel()
		if err == nil && !isLost(c) {
			return c, mark
		}
		if attempt == 5 {
			t.Fatalf("no session lived long enough to mark it, 5 times in a row: %v", err)
		}
		t.Logf("session 0x%x lost before the test began (%v); again with a new one", c.SessionID(), err)
		c.Close()
	}
}

func isLost(c *Client) bool {
	select {
	case <-c.Lost():
		return true
	default:
		return false
	}
}

func TestDialUnavailable(t *testing.T) {
	start := time.Now()
	_, err := Dial(context.Background(), Options{ConnString: ConnString{Servers: []string{"127.0.0.1:1"}},
		ConnectTimeout: 500 * time.Millisecond})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Dial to a closed port: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Dial took %s with a 500ms connect timeout", d)
	}
}

func TestChrootPaths(t *testing.T) {
	ctx := context.Background()
	cs, _ := ParseConnString(server(t).ConnectString() + "/zkconn-chroot/x")
	c, err := Dial(ctx, Options{ConnString: cs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.EnsureChroot(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := c.Create(ctx, "/n", []byte("d"), zk.FlagEphemeral)
	if err != nil || p != "/n" {
		t.Fatalf("Create = %q, %v", p, err)
	}
	conn := zktest.DialT(t, server(t).Addrs())
	if data, _, err := conn.Get("/zkconn-chroot/x/n"); err != nil || string(data) != "d" {
		t.Errorf("raw view of the chrooted node: %q %v", data, err)
	}
	if ch, err := c.Children(ctx, "/"); err != nil || len(ch) != 1 || ch[0] != "n" {
		t.Errorf("Children(/) under the chroot = %v, %v", ch, err)
	}
}

// TestCreateZxidAndCloseAcked: the czxid of our creates is read off the
// wire, and a close reports whether the server confirmed it.
func TestCreateZxidAndCloseAcked(t *testing.T) {
	ctx := context.Background()
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	c := dialT(t, []string{proxy.Addr()}, 4*time.Second)
	p, err := c.Create(ctx, "/zxid-", nil, zk.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	z, ok := c.CreateZxid(p)
	_, st, err := c.Exists(ctx, p)
	if !ok || err != nil || z != st.Czxid {
		t.Fatalf("CreateZxid = %d, %v; czxid %d (%v)", z, ok, st.Czxid, err)
	}
	if !c.CloseAcked(context.Background()) {
		t.Error("a healthy close was not confirmed")
	}
	conn := zktest.DialT(t, server(t).Addrs())
	if ok, _, _ := conn.Exists(p); ok {
		t.Error("the ephemeral node survived the confirmed close")
	}

	c2 := dialT(t, []string{proxy.Addr()}, 4*time.Second)
	proxy.Blackhole()
	defer proxy.Heal()
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if c2.CloseAcked(short) {
		t.Error("a close into silence was reported as confirmed")
	}
}

// TestCloseSentAgain: a close that dies on its way to the server (as with
// a leader that dies) is sent again through another server of the connect
// string, and the session's nodes go at once, not when it expires.
func TestCloseSentAgain(t *testing.T) {
	ctx := context.Background()
	first := zktest.NewProxyT(t, server(t).Addrs()[0])
	other := zktest.NewProxyT(t, server(t).Addrs()[0])
	other.Cut() // the session starts through first
	c := dialT(t, []string{first.Addr(), other.Addr()}, 20*time.Second)
	other.Heal()
	p, err := c.Create(ctx, "/again-", nil, zk.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	swallowed := first.SwallowRequest(zktest.OpCloseSession)
	go func() {
		<-swallowed
		first.Cut() // the server dies with the close
	}()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if !c.CloseAcked(rctx) {
		t.Fatal("the close sent again was not confirmed")
	}
	conn := zktest.DialT(t, server(t).Addrs())
	if ok, _, err := conn.Exists(p); err != nil || ok {
		t.Fatalf("the session's node after the close: exists %v, %v", ok, err)
	}
}
