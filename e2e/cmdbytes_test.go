package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestCommandNotUTF8: a command line that is not valid UTF-8 is kept byte
// for byte in the node: list --json shows exactly what runs (cmd_bytes,
// base64, beside the cmd that JSON text must show with U+FFFD), and the
// table shows the bytes escaped.
func TestCommandNotUTF8(t *testing.T) {
	path, dir := lockPath(t), t.TempDir()
	argv := []string{"sh", "-c", `touch "$0"; while [ ! -e "$0.go" ]; do sleep 0.02; done`, filepath.Join(dir, "in"), "caf\xe9", "\xff\xfe"}
	c := zklock(t, append([]string{"run", "--path", path, "--"}, argv...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	zktest.Eventually(t, 10*time.Second, "the command", func() bool { return fileExists(filepath.Join(dir, "in")) })
	r := runWithin(t, 20*time.Second, zklock(t, "list", "--path", path, "--json"))
	var listed struct {
		Locks []struct {
			Entries []struct {
				Cmd      []string `json:"cmd"`
				CmdBytes [][]byte `json:"cmd_bytes"`
			} `json:"entries"`
		} `json:"locks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed.Locks) != 1 || len(listed.Locks[0].Entries) != 1 {
		t.Fatalf("list --json: %v: %s", err, r.stdout)
	}
	e := listed.Locks[0].Entries[0]
	var got []string
	for _, b := range e.CmdBytes {
		got = append(got, string(b))
	}
	if !slices.Equal(got, argv) {
		t.Errorf("list --json: cmd_bytes %q, want the command as it runs, %q (cmd %q)", got, argv, e.Cmd)
	}
	r = runWithin(t, 20*time.Second, zklock(t, "list", "--path", path))
	if !strings.Contains(r.stdout, `caf\xe9`) || !strings.Contains(r.stdout, `\xff\xfe`) {
		t.Errorf("list: %s; want the bytes escaped", r.stdout)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := zktest.ExitCodeT(t, c.Wait()); code != 0 {
		t.Errorf("exit %d", code)
	}
}
