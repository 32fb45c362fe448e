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
		{10 * time.Second, 5 * time.Second, 6500 * time.Millisecond, 2500 * time.Millisecond},
		{10 * time.Second, time.Second, 8 * time.Second, time.Second},
		{40 * time.Second, 5 * time.Second, 31 * time.Second, 5 * time.Second},
		{4 * time.Second, 5 * time.Second, 2600 * time.Millisecond, time.Second},
		{2 * time.Second, 0, 1800 * time.Millisecond, 0},
		{800 * time.Millisecond, time.Second, 500 * time.Millisecond, 200 * time.Millisecond},
	} {
		b := NewBudget(tc.timeout, tc.grace)
		if b.Deadline != tc.deadline || b.Grace != tc.cappedGrace {
			t.Errorf("NewBudget(%s, %s) = %+v, want deadline %s grace %s", tc.timeout, tc.grace, b, tc.deadline, tc.cappedGrace)
		}
		// The invariants the arithmetic exists for.
		if b.Deadline+b.Grace+b.Margin != b.Timeout {
			t.Errorf("%+v: deadline+grace+margin != timeout", b)
		}
		if b.Deadline <= b.Timeout/3 {
			t.Errorf("%+v: deadline within the ping interval; a healthy session would trip it", b)
		}
		if b.Margin < minMargin {
			t.Errorf("%+v: margin too small", b)
		}
	}
}
