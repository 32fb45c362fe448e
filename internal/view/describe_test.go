package view

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
)

// TestDescribe: a zklock holder is named by user, host, pid, command and
// time; another client by its flavor, its data and its node.
func TestDescribe(t *testing.T) {
	es := entries()
	acquired := es[0]
	d := owner.Decode(acquired.Data)
	d.Owner.Acquired = time.Date(2026, 11, 21, 3, 0, 2, 0, time.UTC)
	acquired.Data = d.Owner.Encode()
	for _, tc := range []struct {
		e    recipe.Entry
		want string
	}{
		{es[0], "deploy@web-3 pid 81233 (sh -c 'echo hi') since " + owner.Decode(es[0].Data).Owner.Since.Local().Format(time.RFC3339)},
		{acquired, "deploy@web-3 pid 81233 (sh -c 'echo hi') since " + d.Owner.Acquired.Local().Format(time.RFC3339)},
		{es[1], `kazoo client "worker-7" (node ` + es[1].Name + ")"},
	} {
		if got := DescribeEntry(tc.e); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
	busy := &recipe.BusyError{Path: "/locks/a", Holder: es[1].Contender, Data: es[1].Data}
	if got, want := Busy(busy), `/locks/a is busy: held by kazoo client "worker-7" (node `+es[1].Name+")"; got != want {
		t.Errorf("Busy = %q, want %q", got, want)
	}
	busy.Limit = 2
	if got, want := Busy(busy), `/locks/a is busy: all 2 leases are taken, the first by kazoo client "worker-7" (node `+es[1].Name+")"; got != want {
		t.Errorf("Busy = %q, want %q", got, want)
	}
	busy.Limit = 0
	busy.Pool = &recipe.PoolShortage{Path: "/locks", Take: 2, Free: 1, Size: 3}
	if got, want := Busy(busy), `pool /locks is busy: 1 of its 3 members free, 2 needed; /locks/a is held by kazoo client "worker-7" (node `+es[1].Name+")"; got != want {
		t.Errorf("Busy = %q, want %q", got, want)
	}
	busy.Pool.Queued = true
	if got, want := Busy(busy), `pool /locks is busy: kazoo client "worker-7" (node `+es[1].Name+") is ahead in its queue"; got != want {
		t.Errorf("Busy = %q, want %q", got, want)
	}
	if got, want := HeldBy("/locks/a", es[:2]), "/locks/a held by "+DescribeEntry(es[0])+" and 1 more"; got != want {
		t.Errorf("HeldBy = %q, want %q", got, want)
	}
	if got := HeldBy("/locks/a", nil); got != "" {
		t.Errorf("HeldBy with no holders = %q, want \"\"", got)
	}
}

// TestBusyUnread: a holder whose data was never read is named by its node
// alone. A zklock node's name is Curator's, so naming its flavor would
// call a zklock holder a "curator client".
func TestBusyUnread(t *testing.T) {
	zklockNode := entries()[0].Contender
	for _, tc := range []struct {
		unread error
		want   string
	}{
		{zk.ErrNoNode, "/locks/a is busy: held by node " + zklockNode.Name + ", which left as it was read: the lock is changing hands fast"},
		{zk.ErrConnectionClosed, "/locks/a is busy: held by node " + zklockNode.Name + " (its data could not be read: zk: connection closed)"},
	} {
		if got := Busy(&recipe.BusyError{Path: "/locks/a", Holder: zklockNode, Unread: tc.unread}); got != tc.want {
			t.Errorf("Busy = %q, want %q", got, tc.want)
		}
	}
}
