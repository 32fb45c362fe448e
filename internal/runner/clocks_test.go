package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
)

// TestRecordAge: the clock rule, case by case. The age is the youngest
// of the servers' and the writer's, whatever the epochs; a disagreement
// beyond the tolerance, or a date in the future, is said.
func TestRecordAge(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(epoch uint32, at, written time.Time) success.Record {
		s := success.Record{Path: "/j", At: at, Epoch: epoch}
		if !written.IsZero() {
			s.NodeData = owner.NodeData{ByZklock: true, Owner: owner.Owner{Zklock: "1", Host: "h1", Written: written}}
		}
		return s
	}
	now := func(epoch uint32, at time.Time) recipe.ServerTime { return recipe.ServerTime{At: at, Epoch: epoch} }
	for _, tc := range []struct {
		name  string
		rec   success.Record
		now   recipe.ServerTime
		host  time.Time
		age   time.Duration
		doubt string // in the doubt's text; "" for none
	}{
		{"one epoch, the hosts agree", rec(3, t0, t0), now(3, t0.Add(time.Minute)), t0.Add(time.Minute + time.Second), time.Minute, ""},
		{"one epoch, the writer's clock younger: the leader's clock stepped forward", rec(3, t0, t0), now(3, t0.Add(2*time.Hour+time.Minute)), t0.Add(time.Minute), time.Minute, "2h1m0s old by the servers' clocks (one leader's, epoch 0x3, whose clock may have stepped since) but 1m0s old by the clock of h1"},
		{"one epoch, the server's age younger: the writer's clock was behind", rec(3, t0, t0.Add(-time.Hour)), now(3, t0.Add(time.Minute)), t0.Add(9 * time.Hour), time.Minute, "disagree by about 9h59m0s"},
		{"within the tolerance: the younger age, nothing said", rec(4, t0, t0), now(5, t0.Add(time.Hour)), t0.Add(time.Hour - 4*time.Second), time.Hour - 4*time.Second, ""},
		{"the writer's clock ahead of this host's: from the future", rec(3, t0, t0.Add(time.Hour)), now(3, t0.Add(time.Minute)), t0.Add(time.Minute), -59 * time.Minute, "1m0s old by the servers' clocks (one leader's, epoch 0x3, whose clock may have stepped since) but dated 59m0s in the future by the clock of h1"},
		{"one epoch, dated ahead: the leader's clock went back", rec(3, t0, t0), now(3, t0.Add(-time.Minute)), t0.Add(time.Second), -time.Minute, "dated 1m0s in the future by the servers' clocks (one leader's, epoch 0x3"},
		{"two epochs that agree", rec(3, t0, t0), now(4, t0.Add(time.Hour)), t0.Add(time.Hour + 2*time.Second), time.Hour, ""},
		{"a leader 10s ahead dates now: the writer's age", rec(3, t0, t0), now(4, t0.Add(30*time.Second)), t0.Add(20 * time.Second), 20 * time.Second, "30s old by the servers' clocks (written under leader epoch 0x3, now 0x4) but 20s old by the clock of h1"},
		{"a slow leader dated it: younger by the hosts", rec(3, t0.Add(-2*time.Hour), t0), now(4, t0.Add(3*time.Second)), t0.Add(3 * time.Second), 3 * time.Second, "2h0m3s old by the servers' clocks (written under leader epoch 0x3, now 0x4) but 3s old by the clock of h1"},
		{"a slow leader dates now: from the future", rec(4, t0, t0), now(5, t0.Add(3*time.Second-2*time.Hour)), t0.Add(3 * time.Second), 3*time.Second - 2*time.Hour, "dated 1h59m57s in the future"},
		{"the writer's host runs ahead", rec(3, t0, t0.Add(time.Hour)), now(4, t0.Add(2*time.Hour)), t0.Add(2 * time.Hour), time.Hour, "1h0m0s old by the clock of h1"},
		{"standalone, its clock set forward since: younger by the hosts", rec(0, t0.Add(-2*time.Hour), t0), now(0, t0.Add(time.Minute)), t0.Add(time.Minute), time.Minute, "2h1m0s old by the servers' clocks (written by a standalone server, whose clock may have been set since) but 1m0s old by the clock of h1"},
		{"standalone, the clocks agree", rec(0, t0, t0), now(0, t0.Add(time.Hour)), t0.Add(time.Hour + time.Second), time.Hour, ""},
		{"standalone, its clock set 2h forward: the writer's age", rec(0, t0, t0), now(0, t0.Add(2*time.Hour+26*time.Second)), t0.Add(26 * time.Second), 26 * time.Second, "but 26s old by the clock of h1"},
		{"standalone, dated ahead, no writer's clock", rec(0, t0, time.Time{}), now(0, t0.Add(-time.Minute)), t0, -time.Minute, "went back"},
		{"no writer's clock: the server's age", rec(3, t0, time.Time{}), now(4, t0.Add(time.Hour)), t0, time.Hour, ""},
		{"no writer's clock, from the future", rec(3, t0, time.Time{}), now(4, t0.Add(-time.Hour)), t0, -time.Hour, "the servers' clocks disagree"},
		{"one epoch, no writer's clock, from the future", rec(3, t0, time.Time{}), now(3, t0.Add(-time.Hour)), t0, -time.Hour, "went back"},
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

// TestRecordAgeEnds: at most once, and not never. Whatever the clocks'
// offsets at the write and now, the record's age is never older than the
// real time since the write (plus the tolerance a real age allows for),
// and once the real time passes the window by the largest offset, every
// age has passed it: the skip ends by itself.
func TestRecordAgeEnds(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	const window = time.Hour
	offsets := []time.Duration{-2 * time.Hour, -10 * time.Second, 0, 3 * time.Second, 10 * time.Second, 2 * time.Hour}
	for _, leaderThen := range offsets {
		for _, writer := range offsets {
			for _, leaderNow := range offsets {
				for _, epochs := range [][2]uint32{{0, 0}, {3, 3}, {3, 4}} {
					rec := success.Record{Path: "/j", At: t0.Add(leaderThen), Epoch: epochs[0],
						NodeData: owner.NodeData{ByZklock: true, Owner: owner.Owner{Zklock: "1", Host: "h1", Written: t0.Add(writer)}}}
					age := func(real time.Duration) time.Duration {
						a, _ := recordAge(rec, recipe.ServerTime{At: t0.Add(real + leaderNow), Epoch: epochs[1]}, t0.Add(real))
						return a
					}
					for _, real := range []time.Duration{0, time.Minute, window - time.Second} {
						// The writer's age is exact when the writer's clock was
						// this host's: it alone keeps a run within the window.
						if writer == 0 && age(real) >= window {
							t.Errorf("leader %s then, writer %s, leader %s now, epochs %v: %s after the write, age %s passes the window",
								leaderThen, writer, leaderNow, epochs, real, age(real))
						}
					}
					worst := max(abs(leaderThen-leaderNow), abs(writer))
					if a := age(window + worst); a < window {
						t.Errorf("leader %s then, writer %s, leader %s now, epochs %v: %s after the write, age %s, still within the window",
							leaderThen, writer, leaderNow, epochs, window+worst, a)
					}
				}
			}
		}
	}
}
