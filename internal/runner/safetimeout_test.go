package runner

import (
	"testing"
	"time"

	"github.com/zklock/zklock/lockexec"
)

// timeoutCase is a link (its round trip, and whether it is TLS) and the
// session timeout a search should find for it.
type timeoutCase struct {
	rtt  time.Duration
	tls  bool
	want time.Duration
}

// check compares what find (SafeTimeout or LinkTimeout, named name) finds
// for the link, at the default kill grace, with c.want, and returns it.
func (c timeoutCase) check(t *testing.T, name string, find func(rtt time.Duration, tls bool, killGrace time.Duration) time.Duration) time.Duration {
	t.Helper()
	got := find(c.rtt, c.tls, lockexec.DefaultKillGrace)
	if got != c.want {
		t.Errorf("%s(%s, tls %v) = %s, want %s", name, c.rtt, c.tls, got, c.want)
	}
	return got
}

// TestSafeTimeout checks the figures that the documentation quotes, and
// that the timeout found is the smallest: a tenth of a second less leaves
// the election no room.
func TestSafeTimeout(t *testing.T) {
	grace := lockexec.DefaultKillGrace
	for _, c := range []timeoutCase{
		{0, false, 7800 * time.Millisecond},
		{time.Millisecond, false, 7800 * time.Millisecond},
		{50 * time.Millisecond, false, 8300 * time.Millisecond},
		{150 * time.Millisecond, false, 9500 * time.Millisecond},
		{300 * time.Millisecond, false, 11200 * time.Millisecond},
		{300 * time.Millisecond, true, 12900 * time.Millisecond},
		{500 * time.Millisecond, false, 13500 * time.Millisecond},
	} {
		got := c.check(t, "SafeTimeout", SafeTimeout)
		room := func(timeout time.Duration) time.Duration {
			reconnect := 2 * c.rtt
			if c.tls {
				reconnect = 4 * c.rtt
			}
			lag := timeout/4 + 2*max(timeout/syncDivisor, c.rtt) + 2*c.rtt
			return NewBudget(timeout, grace).Deadline - lag - ElectionAllowance - reconnect
		}
		if room(got) <= 0 || room(got-safeStep) > 0 {
			t.Errorf("SafeTimeout(%s) = %s: room %s there, %s a step below", c.rtt, got, room(got), room(got-safeStep))
		}
	}
	// A shorter kill grace leaves more of T before the deadline.
	if a, b := SafeTimeout(0, false, 0), SafeTimeout(0, false, grace); a >= b {
		t.Errorf("kill grace 0: %s, not below %s", a, b)
	}
}

// TestLinkTimeout: the link alone asks for much less than an election,
// and never more than SafeTimeout; run warns only below it, so a short
// timeout chosen on a local network is not warned of at every run.
func TestLinkTimeout(t *testing.T) {
	grace := lockexec.DefaultKillGrace
	for _, c := range []timeoutCase{
		{time.Millisecond, false, 400 * time.Millisecond},
		{150 * time.Millisecond, false, 2100 * time.Millisecond},
		{300 * time.Millisecond, false, 4100 * time.Millisecond},
		{400 * time.Millisecond, false, 5400 * time.Millisecond},
		{400 * time.Millisecond, true, 7200 * time.Millisecond},
	} {
		got := c.check(t, "LinkTimeout", LinkTimeout)
		if safe := SafeTimeout(c.rtt, c.tls, grace); got >= safe {
			t.Errorf("LinkTimeout(%s) = %s, not below SafeTimeout %s", c.rtt, got, safe)
		}
	}
}
