package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestHugeCommandLine: a command line over 1 MB (more than the server's
// default jute.maxbuffer) runs normally; the node holds a bounded copy
// that says it was cut.
func TestHugeCommandLine(t *testing.T) {
	path := lockPath(t)
	// Linux limits one argument to 128 KiB: ten of 110 000 bytes.
	args := []string{"run", "--path", path, "--", "sh", "-c", `touch "$0.started"; while [ ! -e "$0" ]; do sleep 0.01; done`, t.TempDir() + "/go"}
	for i := 0; i < 10; i++ {
		args = append(args, strings.Repeat("x", 110_000))
	}
	c := zklock(t, args...)
	var stderr syncBuffer
	c.Stderr = &stderr
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	goFile := args[7]
	zktest.Eventually(t, 10*time.Second, "the command", func() bool { return fileExists(goFile + ".started") })
	conn := rawZK(t)
	ch, _, err := conn.Children(path)
	if err != nil || len(ch) != 1 {
		t.Fatalf("queue %v (%v)", ch, err)
	}
	data, _, err := conn.Get(path + "/" + ch[0])
	if err != nil {
		t.Fatal(err)
	}
	d := owner.Decode(data)
	o := d.Owner
	if !d.ByZklock || len(data) > owner.MaxCmdBytes+1024 || o.CmdCut == 0 || !strings.Contains(o.CommandLine(), "bytes more]") {
		t.Errorf("node data of %d bytes, cut %d: %.200s", len(data), o.CmdCut, data)
	}
	touch(t, goFile)
	if code := zktest.ExitCodeT(t, c.Wait()); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	assertGone(t, conn, path)
}
