package zkconn

import (
	"testing"
	"time"
)

// TestSeenZxidIsATransaction: a new leader's makeZxid(epoch, 0) names no
// transaction, and its followers, which still report the epoch before,
// are not behind it: only transactions' zxids count as seen.
func TestSeenZxidIsATransaction(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := &wireTracker{now: func() time.Time { return now }}
	fc, c := connected(tr)
	fc.in.Write(rep(-2, 0x1_00000064)) // a ping's reply: the last transaction
	fc.in.Write(rep(-1, 0x1_00000065)) // a notification
	fc.in.Write(rep(-2, 0x2_00000000)) // a new leader, before any transaction of its epoch
	c.Read(make([]byte, 4096))
	if tr.maxZxid != 0x1_00000065 {
		t.Fatalf("seen 0x%x, want 0x100000065", tr.maxZxid)
	}
}
