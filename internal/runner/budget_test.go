package runner

import (
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		timeout, grace        time.Duration
		deadline, cappedGrace time.Duration
	}{
		{10 * time.Second, 5 * time.Second, 7 * time.Second, 1900 * time.Millisecond},
		{10 * time.Second, time.Second, 7900 * time.Millisecond, time.Second},
		{40 * time.Second, 5 * time.Second, 30900 * time.Millisecond, 5 * time.Second},
		{4 * time.Second, 5 * time.Second, 2800 * time.Millisecond, 700 * time.Millisecond},
		{2 * time.Second, 0, 1650 * time.Millisecond, 0},
		{800 * time.Millisecond, time.Second, 540 * time.Millisecond, 60 * time.Millisecond},
	} {
		b := NewBudget(tc.timeout, tc.grace)
		if b.Deadline != tc.deadline || b.Grace != tc.cappedGrace {
			t.Errorf("NewBudget(%s, %s) = %+v, want deadline %s grace %s", tc.timeout, tc.grace, b, tc.deadline, tc.cappedGrace)
		}
		// The invariants the arithmetic exists for: the watchdog's SIGKILL
		// leaves the teardown and the margin, zklock's comes no later.
		noGraceLead := time.Duration(0)
		if b.Grace == 0 {
			noGraceLead = b.Lead
		}
		if b.Deadline+b.Grace+noGraceLead+b.Teardown+b.Margin != b.Timeout {
			t.Errorf("%+v: deadline+grace+teardown+margin (+lead without a grace) != timeout", b)
		}
		if b.Teardown != killTeardown || b.Grace < 0 {
			t.Errorf("%+v: the teardown is not the one measured, or the grace is negative", b)
		}
		// QuorumHeard trails by up to T/20 + T/4 + T/20 on a healthy
		// ensemble; a failover needs about T/5 more.
		if lag := b.Timeout*35/100 + b.Timeout/5; b.Deadline <= lag {
			t.Errorf("%+v: deadline within the certification lag plus a failover (%s): a healthy session would trip it", b, lag)
		}
		if b.Margin < minMargin {
			t.Errorf("%+v: margin too small", b)
		}
		q := time.Unix(100, 0)
		if b.Kill(q).Sub(b.Stop(q)) != b.Grace || q.Add(b.Timeout).Sub(b.Kill(q)) != b.Left() || b.Left() < b.Teardown+b.Margin {
			t.Errorf("%+v: Stop/Kill do not follow the budget", b)
		}
		// The watchdog trails zklock by the lead, within the grace or, with
		// none, within the margin; its SIGKILL leaves the margin whole.
		w, wk := b.WatchdogStop(q), b.WatchdogKill(q)
		if b.Lead <= 0 || b.Lead > watchdogLag || w.Sub(b.Stop(q)) != b.Lead || wk.Before(b.Kill(q)) || wk.Before(w) ||
			q.Add(b.Timeout).Sub(wk) != b.Teardown+b.Margin {
			t.Errorf("%+v: watchdog's SIGTERM at %s, SIGKILL at %s; zklock's at %s and %s", b, w.Sub(q), wk.Sub(q), b.Deadline, b.Kill(q).Sub(q))
		}
	}
}
