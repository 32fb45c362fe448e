package runner

import (
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
)

// TestHeldSince: the holder's hold is timed on the server's clock, whatever
// the holder's and this host's clocks say: the node's creation plus the
// wait the holder measured on its own clock, shifted by the server's offset
// from ours; a takeover seen later than that wins.
func TestHeldSince(t *testing.T) {
	server := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC) // the node's ctime
	// The holder's clock is an hour off; it waited 90 s before holding.
	skewed := server.Add(time.Hour)
	waited := owner.NodeData{ByZklock: true, Owner: owner.Owner{Since: skewed, Acquired: skewed.Add(90 * time.Second)}}
	onJoin := owner.NodeData{ByZklock: true, Owner: owner.Owner{Since: skewed}}
	foreign := owner.NodeData{Raw: "10.0.0.7"}
	offset := 2 * time.Second // the server's clock is 2 s ahead of ours
	for _, tc := range []struct {
		name     string
		d        owner.NodeData
		tookOver time.Time
		want     time.Time
	}{
		{"recorded wait", waited, time.Time{}, server.Add(90*time.Second - offset)},
		{"took it on joining", onJoin, time.Time{}, server.Add(-offset)},
		{"another client", foreign, time.Time{}, server.Add(-offset)},
		{"seen taking over later", onJoin, server.Add(time.Minute), server.Add(time.Minute)},
		{"seen taking over earlier", waited, server, server.Add(90*time.Second - offset)},
	} {
		if got := heldSince(server, tc.d, offset, tc.tookOver); !got.Equal(tc.want) {
			t.Errorf("%s: held since %s, want %s", tc.name, got, tc.want)
		}
	}
}
