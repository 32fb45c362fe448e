package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRunWithoutPATH: under `env -i` there is no PATH at all; the command is
// looked up in the default search path, as flock(1) and execvp do, instead
// of failing with 127.
func TestRunWithoutPATH(t *testing.T) {
	bin, err := exec.LookPath("zklock")
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, "run", "--servers", server(t).ConnectString(), "--path", lockPath(t), "--", "env")
	c.Env = []string{} // not nil: nil would mean this process's environment
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ZKLOCK_PATH=") {
		t.Fatalf("env -i zklock run -- env: %q, %v", out, err)
	}
	// The command's environment is left as it was given: no PATH.
	for _, kv := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(kv, "PATH=") {
			t.Errorf("the command was given %s", kv)
		}
	}
}
