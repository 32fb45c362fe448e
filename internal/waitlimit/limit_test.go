package waitlimit

import (
	"testing"
	"time"
)

// TestFrom: the deadline counts from the wait's start, a timeout of zero
// or less is no wait, and no timeout is no deadline.
func TestFrom(t *testing.T) {
	start := time.Unix(1000, 0)
	if w := AtMost(2 * time.Second).From(start); w.IsNoWait() {
		t.Error("AtMost(2s) does not wait")
	} else if d, ok := w.Deadline(); !ok || !d.Equal(start.Add(2*time.Second)) {
		t.Errorf("AtMost(2s) from %v: deadline %v %v", start, d, ok)
	}
	for _, l := range []Limit{None, AtMost(0), AtMost(-time.Second)} {
		if !l.From(start).IsNoWait() {
			t.Errorf("%+v waits", l)
		}
		if _, ok := l.Timeout(); ok {
			t.Errorf("%+v has a timeout", l)
		}
	}
	w := Forever.From(start)
	if _, ok := w.Deadline(); ok || w.IsNoWait() {
		t.Error("Forever has a deadline or does not wait")
	}
}
