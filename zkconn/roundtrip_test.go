package zkconn

import (
	"testing"
	"time"

	"github.com/zklock/zklock/internal/jute"
	"github.com/zklock/zklock/internal/zktest"
)

// TestRoundTripSmoothing: the estimator follows RFC 6298's arithmetic.
func TestRoundTripSmoothing(t *testing.T) {
	var r roundTrip
	if r.measured() {
		t.Fatal("measured before any sample")
	}
	r.observe(400 * time.Millisecond)
	if r.srtt != 400*time.Millisecond || r.rttvar != 200*time.Millisecond {
		t.Fatalf("first sample: srtt %s rttvar %s, want 400ms 200ms", r.srtt, r.rttvar)
	}
	r.observe(800 * time.Millisecond)
	// rttvar = (3·200 + |400−800|)/4 = 250; srtt = (7·400 + 800)/8 = 450.
	if r.srtt != 450*time.Millisecond || r.rttvar != 250*time.Millisecond {
		t.Fatalf("second sample: srtt %s rttvar %s, want 450ms 250ms", r.srtt, r.rttvar)
	}
	if r.patience() != 1450*time.Millisecond {
		t.Fatalf("patience %s, want 1.45s", r.patience())
	}
	for range 100 {
		r.observe(300 * time.Millisecond)
	}
	if d := r.srtt - 300*time.Millisecond; d < 0 || d > time.Millisecond || r.rttvar > time.Millisecond {
		t.Fatalf("steady 300ms: srtt %s rttvar %s", r.srtt, r.rttvar)
	}
}

// TestRoundTripOnTheWire: the handshake is the first sample; a reply to a
// request sent while another waited ahead of it is none; a new connection
// starts afresh, and until its handshake the estimate is the previous
// connection's.
func TestRoundTripOnTheWire(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }}
	if tr.roundTrip().measured() {
		t.Fatal("measured before any connection")
	}
	fc := &fakeConn{}
	c := tr.wrap(fc, "s")
	connReq := make([]byte, 40)
	c.Write(frame(connReq...))
	now = now.Add(300 * time.Millisecond)
	resp := make([]byte, 20)
	resp[6], resp[7] = 0x0f, 0xa0 // 4000 ms
	resp[15] = 1                  // session 1
	fc.in.Write(frame(resp...))
	c.Read(make([]byte, 4096))
	if got := tr.roundTrip().srtt; got != 300*time.Millisecond {
		t.Fatalf("after the handshake %s, want its 300ms", got)
	}

	// A sync, and a ping sent 100ms later while the sync still waits:
	// both are answered at 500ms. Only the sync's 500ms counts.
	c.Write(req(1, jute.OpSync))
	now = now.Add(100 * time.Millisecond)
	c.Write(req(-2, 11))
	now = now.Add(400 * time.Millisecond)
	fc.in.Write(rep(1, 0))
	fc.in.Write(rep(-2, 0))
	c.Read(make([]byte, 4096))
	// srtt = (7·300 + 500)/8 = 325.
	if got := tr.roundTrip(); got.srtt != 325*time.Millisecond || got.samples != 2 {
		t.Fatalf("after the sync: %+v, want srtt 325ms from 2 samples", got)
	}

	// A new connection: until its handshake, the old estimate stands;
	// then its own, and nothing of the old one.
	fc2 := &fakeConn{}
	c2 := tr.wrap(fc2, "s2")
	if got := tr.roundTrip().srtt; got != 325*time.Millisecond {
		t.Fatalf("before the new handshake %s, want the previous connection's 325ms", got)
	}
	c2.Write(frame(connReq...))
	now = now.Add(20 * time.Millisecond)
	fc2.in.Write(frame(resp...))
	c2.Read(make([]byte, 4096))
	if got := tr.roundTrip(); got.srtt != 20*time.Millisecond || got.samples != 1 {
		t.Fatalf("after the new handshake: %+v, want srtt 20ms from 1 sample", got)
	}

	// A late reply on the old connection does not touch the estimate.
	c.Write(req(2, jute.OpExists))
	now = now.Add(2 * time.Second)
	fc.in.Write(rep(2, 0))
	c.Read(make([]byte, 4096))
	if got := tr.roundTrip().srtt; got != 20*time.Millisecond {
		t.Fatalf("a reply on the old connection moved the estimate to %s", got)
	}
}

// TestRoundTripMeasured: through a proxy that delays each direction by
// 150ms, a session's round trip reads about 300ms, at once and after the
// keepalive's syncs have been answered.
func TestRoundTripMeasured(t *testing.T) {
	const oneWay = 150 * time.Millisecond
	p := zktest.NewProxyT(t, server(t).Addrs()[0])
	p.SetDelay(oneWay)
	c := dialT(t, []string{p.Addr()}, 4*time.Second)
	check := func(when string) {
		t.Helper()
		if rt := c.RoundTrip(); rt < 2*oneWay || rt > 2*oneWay+150*time.Millisecond {
			t.Errorf("%s: round trip %s, want about %s", when, rt, 2*oneWay)
		}
	}
	check("after the handshake")
	synced := c.QuorumHeard()
	zktest.Eventually(t, 5*time.Second, "a sync to be answered", func() bool {
		return c.QuorumHeard().After(synced)
	})
	check("after the syncs")
	t.Logf("round trip through a %s proxy: %s", 2*oneWay, c.RoundTrip())
}
