//go:build unix

package lockexec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestResolveWithoutPATH: with PATH unset, a command name is looked up in
// the default search path, as execvp does; a name found nowhere is still
// 127.
func TestResolveWithoutPATH(t *testing.T) {
	t.Setenv("PATH", "") // restored after the test
	os.Unsetenv("PATH")
	got, err := Resolve([]string{"sh", "-c", "true"})
	if err != nil {
		t.Fatalf("sh with PATH unset: %v", err)
	}
	if dir := filepath.Dir(got); dir != "/bin" && dir != "/usr/bin" {
		t.Errorf("sh resolved to %s, want it in /bin or /usr/bin", got)
	}
	_, err = Resolve([]string{"no-such-command-zklock"})
	var se *StartError
	if !errors.As(err, &se) || se.Code != 127 {
		t.Errorf("a missing command with PATH unset: %v, want a 127 StartError", err)
	}
}
