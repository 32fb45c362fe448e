package view

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
)

// TestStatusLineClearedForMessages: a message printed while the status line
// is drawn erases the line first, so the message starts a clean line; Done
// ends the redraws (the line is not drawn again over the message).
func TestStatusLineClearedForMessages(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	s := &StatusLine{w: &b, width: func() int { return 200 }, now: func() time.Time { return now }}
	ct, _ := recipe.ParseContender("_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lock-0000000041")
	s.Waiting(runner.WaitStatus{Path: "/locks/a", Position: 2, Since: now.Add(-12 * time.Second),
		Holder: &runner.Holder{Contender: ct, HeldSince: now.Add(-123 * time.Second),
			NodeData: owner.NodeData{ByZklock: true, Owner: owner.Owner{Host: "web-3", PID: 81233, User: "deploy", Cmd: []string{"./report.sh"}}}}})
	s.Around(func() { fmt.Fprintln(&b, "zklock: warning: joining the queue again") })
	s.Done()
	want := eraseLine + "zklock: waiting for /locks/a, position 2, held by deploy@web-3 pid 81233 (./report.sh) for 2m3s; waited 12s" +
		eraseLine + "zklock: warning: joining the queue again\n"
	if got := b.String(); got != want {
		t.Errorf("stderr = %q\nwant %q", got, want)
	}
}
