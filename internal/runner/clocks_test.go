package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/lock"
)

// TestRecordAge: the clock rule, case by case. One epoch trusts the
// server's age alone; two epochs check it against the hosts' clocks and
// take the younger age when they disagree; a date in the future is always
// in doubt.
func TestRecordAge(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(epoch uint32, at, written time.Time) success.Record {
		s := success.Record{Path: "/j", At: at, Epoch: epoch}
		if !written.IsZero() {
			s.NodeData = owner.NodeData{ByZklock: true, Owner: owner.Owner{Zklock: "1", Host: "h1", Written: written}}
		}
		return s
	}
	now := func(epoch uint32, at time.Time) lock.ServerTime { return lock.ServerTime{At: at, Epoch: epoch} }
	for _, tc := range []struct {
		name  string
		rec   success.Record
		now   lock.ServerTime
		host  time.Time
		age   time.Duration
		doubt string // in the doubt's text; "" for none
	}{
		{"one epoch: the server's age, the hosts ignored", rec(3, t0, t0.Add(-time.Hour)), now(3, t0.Add(time.Minute)), t0.Add(9 * time.Hour), time.Minute, ""},
		{"one epoch, dated ahead: the leader's clock went back", rec(3, t0, t0), now(3, t0.Add(-time.Minute)), t0.Add(time.Second), -time.Minute, "went back"},
		{"two epochs that agree", rec(3, t0, t0), now(4, t0.Add(time.Hour)), t0.Add(time.Hour + 2*time.Second), time.Hour, ""},
		{"a slow leader dated it: younger by the hosts", rec(3, t0.Add(-2*time.Hour), t0), now(4, t0.Add(3*time.Second)), t0.Add(3 * time.Second), 3 * time.Second, "2h0m3s old by the servers' clocks (written under leader epoch 0x3, now 0x4) but 3s old by the clock of h1"},
		{"a slow leader dates now: from the future", rec(4, t0, t0), now(5, t0.Add(3*time.Second-2*time.Hour)), t0.Add(3 * time.Second), 3*time.Second - 2*time.Hour, "dated 1h59m57s in the future"},
		{"the writer's host runs ahead", rec(3, t0, t0.Add(time.Hour)), now(4, t0.Add(2*time.Hour)), t0.Add(2 * time.Hour), time.Hour, "1h0m0s old by the clock of h1"},
		{"standalone, its clock set forward since: younger by the hosts", rec(0, t0.Add(-2*time.Hour), t0), now(0, t0.Add(time.Minute)), t0.Add(time.Minute), time.Minute, "2h1m0s old by the servers' clocks (written by a standalone server, whose clock may have been set since) but 1m0s old by the clock of h1"},
		{"standalone, the clocks agree", rec(0, t0, t0), now(0, t0.Add(time.Hour)), t0.Add(time.Hour + time.Second), time.Hour, ""},
		{"standalone, dated ahead, no writer's clock", rec(0, t0, time.Time{}), now(0, t0.Add(-time.Minute)), t0, -time.Minute, "went back"},
		{"no writer's clock: the server's age", rec(3, t0, time.Time{}), now(4, t0.Add(time.Hour)), t0, time.Hour, ""},
		{"no writer's clock, from the future", rec(3, t0, time.Time{}), now(4, t0.Add(-time.Hour)), t0, -time.Hour, "the servers' clocks disagree"},
	} {
		age, doubt := recordAge(tc.rec, tc.now, tc.host)
		if age != tc.age {
			t.Errorf("%s: age %s, want %s", tc.name, age, tc.age)
		}
		switch {
		case tc.doubt == "" && doubt != nil:
			t.Errorf("%s: doubt %q, want none", tc.name, doubt)
		case tc.doubt != "" && (doubt == nil || !strings.Contains(doubt.String(), tc.doubt)):
			t.Errorf("%s: doubt %v, want one saying %q", tc.name, doubt, tc.doubt)
		}
	}
}
