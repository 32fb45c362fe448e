package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// holderNode is the node that holds path: the lowest sequence number.
func holderNode(t *testing.T, conn *zk.Conn, path string) string {
	t.Helper()
	ch, _, err := conn.Children(path)
	if err != nil || len(ch) == 0 {
		t.Fatalf("children of %s: %v %v", path, ch, err)
	}
	seq := func(name string) string { return name[strings.LastIndex(name, "-")+1:] }
	return slices.MinFunc(ch, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
}

// TestNodeDeletedKillsAtOnce: an operator deletes the holder's node while
// its command ignores SIGTERM. The loss is certain, not foreseen: anyone
// may take the lock at once, so the holder must kill its command's whole
// group at once, with no grace. A tryrun started right after the delete
// must run and never find any of the holder's tree alive in the overlap
// detector (with the grace of T/5, the tree ran on for 2s).
func TestNodeDeletedKillsAtOnce(t *testing.T) {
	conn := rawZK(t)
	servers := server(t).ConnectString()
	p := loneHolder(t, servers, 10*time.Second, "trap '' TERM\n"+treeScript)
	node := holderNode(t, conn, p.path)
	deleted := time.Now()
	if err := conn.Delete(p.path+"/"+node, -1); err != nil {
		t.Fatal(err)
	}
	p.tryNext(t, servers)
	if code := zktest.ExitCodeT(t, p.holder.Wait()); code != 76 {
		t.Fatalf("holder exit %d, want 76 (lock lost); stderr: %s", code, p.holderErr.String())
	}
	if msg := p.holderErr.String(); !strings.Contains(msg, "lock node deleted") || !strings.Contains(msg, "sent SIGKILL at once") {
		t.Errorf("holder stderr does not say it killed at once for the deleted node: %s", msg)
	}
	t.Logf("the holder's last timestamp (one every 10ms) came %s after the delete",
		time.Duration(lastStamp(t, p.dir+"/holder")-deleted.UnixNano()).Round(time.Millisecond))
}
