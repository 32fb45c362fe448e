package zkconn

import (
	"testing"
	"time"

	"github.com/zklock/zklock/internal/jute"
	"github.com/zklock/zklock/internal/testkit/zktest"
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
	c := tr.wrap(fc, "s", 0)
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
	c2 := tr.wrap(fc2, "s2", 0)
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

// TestSilenceBound: a fast link keeps T/10; a slow one is given twice its
// patience and one retransmission.
func TestSilenceBound(t *testing.T) {
	steady := func(d time.Duration) roundTrip {
		var r roundTrip
		for range 200 {
			r.observe(d)
		}
		return r
	}
	for _, c := range []struct {
		timeout time.Duration
		rtt     roundTrip
		want    time.Duration
	}{
		{4 * time.Second, roundTrip{}, 400 * time.Millisecond},
		{500 * time.Millisecond, roundTrip{}, minSilence},
		{4 * time.Second, steady(time.Millisecond), 400 * time.Millisecond},
		{4 * time.Second, steady(420 * time.Millisecond), 1040 * time.Millisecond},
		{10 * time.Second, steady(300 * time.Millisecond), time.Second},
	} {
		if got := silenceBound(c.timeout, c.rtt); got < c.want || got > c.want+time.Millisecond {
			t.Errorf("T %s, srtt %s rttvar %s: silence bound %s, want %s", c.timeout, c.rtt.srtt, c.rtt.rttvar, got, c.want)
		}
	}
}

// TestHandshakeBound: a slow connect, or a slow last connection, stretches
// the bound; handshakes that ran out of time double it, up to four times
// the base.
func TestHandshakeBound(t *testing.T) {
	const base = 500 * time.Millisecond
	for _, c := range []struct {
		prior time.Duration
		fails int
		want  time.Duration
	}{
		{0, 0, base},
		{100 * time.Millisecond, 0, base},
		{500 * time.Millisecond, 0, 1200 * time.Millisecond},
		{0, 1, time.Second},
		{0, 2, 2 * time.Second},
		{0, 9, 2 * time.Second},
		{2 * time.Second, 9, 4200 * time.Millisecond},
	} {
		if got := handshakeBound(base, c.prior, c.fails); got != c.want {
			t.Errorf("prior %s, %d fails: %s, want %s", c.prior, c.fails, got, c.want)
		}
	}
}

// timeoutConn fails every read with a timeout, as a deadline does.
type timeoutConn struct{ fakeConn }

type errTimeout struct{}

func (errTimeout) Error() string   { return "i/o timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }

func (c *timeoutConn) Read([]byte) (int, error) { return 0, errTimeout{} }

// TestHandshakeBoundOnTheWire: a handshake that ran into its bound gives
// the next connection twice as long, and is no refusal; once a handshake
// is answered, the bound follows that connection's round trip.
func TestHandshakeBoundOnTheWire(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }, handshake: 500 * time.Millisecond}
	c := tr.wrap(&timeoutConn{}, "s", 0)
	if l := c.(*trackedConn).limit; l != 500*time.Millisecond {
		t.Fatalf("first limit %s, want the base 500ms", l)
	}
	c.Write(frame(make([]byte, 40)...))
	c.Read(make([]byte, 16))
	c = tr.wrap(&timeoutConn{}, "s", 0)
	if l := c.(*trackedConn).limit; l != time.Second {
		t.Fatalf("after a handshake ran out of time, limit %s, want 1s", l)
	}
	if tr.refusals != 0 {
		t.Fatalf("%d refusals counted for a timeout", tr.refusals)
	}
	// A connect that took 300ms: the bound allows for that round trip.
	fc := &fakeConn{}
	c = tr.wrap(fc, "s", 300*time.Millisecond)
	if l := c.(*trackedConn).limit; l != time.Second {
		t.Fatalf("limit %s after a 300ms connect and a failed handshake, want 1s", l)
	}
	c.Write(frame(make([]byte, 40)...))
	now = now.Add(400 * time.Millisecond)
	resp := make([]byte, 20)
	resp[6], resp[7] = 0x0f, 0xa0 // 4000 ms
	resp[15] = 1                  // session 1
	fc.in.Write(frame(resp...))
	c.Read(make([]byte, 4096))
	// Answered in 400ms: srtt 400, rttvar 200, patience 1.2s.
	c = tr.wrap(&fakeConn{}, "s", 0)
	if l := c.(*trackedConn).limit; l != 2600*time.Millisecond {
		t.Fatalf("limit %s after a handshake answered in 400ms, want 2·1.2s + 200ms", l)
	}
}

// TestQuietSinceLastByte: silence counts from the later of the oldest
// waiting request and the server's last bytes, and not before the
// handshake.
func TestQuietSinceLastByte(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }}
	fc := &fakeConn{}
	c := tr.wrap(fc, "s", 0)
	c.Write(frame(make([]byte, 40)...))
	if _, _, _, ok := tr.quiet(); ok {
		t.Fatal("quiet during the handshake")
	}
	handshake(c, fc)
	c.Write(req(1, jute.OpSync))
	c.Write(req(2, jute.OpSync))
	if since, _, _, ok := tr.quiet(); !ok || !since.Equal(now) {
		t.Fatalf("quiet since %v (%v), want the first sync's send time", since, ok)
	}
	now = now.Add(time.Second)
	fc.in.Write(rep(1, 0))
	c.Read(make([]byte, 4096))
	if since, _, _, ok := tr.quiet(); !ok || !since.Equal(now) {
		t.Fatalf("quiet since %v (%v), want the reply's arrival", since, ok)
	}
	fc.in.Write(rep(2, 0))
	c.Read(make([]byte, 4096))
	if _, _, _, ok := tr.quiet(); ok {
		t.Fatal("quiet with nothing waiting")
	}
}

// TestHandshakeBoundAfterRoundTripJump: the link was fast (answers in
// 1ms), then its round trip went to 600ms and the keepalive dropped the
// connection as silent. The next connect itself took 600ms, a round trip
// measured on the new path a moment ago: the handshake bound must allow
// for it, not only for the old connection's 1ms. Bounded by the old
// patience (the 500ms base here), the handshake runs out of time and the
// reconnect costs another attempt, and on the way a holder's QuorumHeard
// falls behind on a link that is slow but alive.
func TestHandshakeBoundAfterRoundTripJump(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }, handshake: 500 * time.Millisecond}
	fc := &fakeConn{}
	c := tr.wrap(fc, "s", time.Millisecond)
	c.Write(frame(make([]byte, 40)...))
	now = now.Add(time.Millisecond)
	resp := make([]byte, 20)
	resp[6], resp[7] = 0x0f, 0xa0 // 4000 ms
	resp[15] = 1                  // session 1
	fc.in.Write(frame(resp...))
	c.Read(make([]byte, 4096))
	c = tr.wrap(&fakeConn{}, "s", 600*time.Millisecond)
	if l, want := c.(*trackedConn).limit, 1400*time.Millisecond; l < want {
		t.Fatalf("limit %s after a 600ms connect, want at least 2·600ms + 200ms = %s", l, want)
	}
}
