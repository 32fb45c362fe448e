package interop

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/peers"
)

// TestSuccessRecordWithPeers: a lock path that holds zklock's success
// record (--once-per) is still one lock for Curator's InterProcessMutex and
// Kazoo's Lock: the record is no contender to them, so they neither wait
// for it forever nor overlap with zklock. zklock's loops keep rewriting the
// record meanwhile (a window of 1ns lets every run run).
func TestSuccessRecordWithPeers(t *testing.T) {
	for _, tc := range []struct {
		runner string
		flags  []string
	}{
		{"curator", nil},
		{"kazoo", []string{"--flavor", "kazoo"}},
	} {
		t.Run(tc.runner, func(t *testing.T) {
			a := newArena(t, true)
			seed := exec.Command(zklockBin(t), append(append([]string{"run", "--once-per", "1ns"}, tc.flags...), "--path", a.path, "--", "true")...)
			seed.Env = a.env("seed")
			if out, err := seed.CombinedOutput(); err != nil {
				t.Fatalf("seeding the record: %v: %s", err, out)
			}
			if ok, _, err := a.conn.Exists(a.path + "/" + success.NodeName); err != nil || !ok {
				t.Fatalf("no record at %s (%v)", a.path, err)
			}
			for i := 1; i <= 2; i++ {
				a.peer(fmt.Sprintf("%s-%d", tc.runner, i), tc.runner, peers.Options{Repeat: 3}, "exclusive", holdExclusive)
			}
			for i := 1; i <= 2; i++ {
				a.zklock(fmt.Sprintf("zklock-%d", i), 3, append([]string{"--once-per", "1ns"}, tc.flags...), "exclusive", holdExclusive)
			}
			a.open(func() bool { return a.queued() == a.procs+1 }) // the record, and one node per contender
			a.wait()
			a.checkDone(2*3+2*3, tc.runner, "zklock")
		})
	}
}
