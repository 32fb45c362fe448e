package runner

import (
	"testing"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/success"
)

// TestOutdatedErrorWriter: the message names the host and pid of the run
// that recorded the key, when the record says them. A record that another
// client wrote with an order key and nothing else says nothing of the
// kind: " (on  pid 0)" would name a run that never was.
func TestOutdatedErrorWriter(t *testing.T) {
	key := int64(7)
	for _, tc := range []struct {
		name string
		o    owner.Owner
		want string
	}{
		{"by zklock", owner.Owner{Zklock: "1.0", Host: "web-3", PID: 81233, OrderKey: &key},
			"not running: order key 3 is outdated, /deploy already succeeded with order key 7 (on web-3 pid 81233)"},
		{"key alone", owner.Owner{Zklock: "x", OrderKey: &key},
			"not running: order key 3 is outdated, /deploy already succeeded with order key 7"},
	} {
		last := success.Record{Path: "/deploy", NodeData: owner.NodeData{ByZklock: true, Owner: tc.o}}
		if got := (&OutdatedError{Path: "/deploy", Key: 3, Last: last}).Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
