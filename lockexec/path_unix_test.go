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

// TestResolvePathEarly: a command given as a path is checked by Resolve,
// before any lock is queued for: missing is 127, a directory or a file
// without the execute bit 126. (Before, only bare names were checked, and
// ./typo.sh failed after the wait.)
func TestResolvePathEarly(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.sh")
	exe := filepath.Join(dir, "exe.sh")
	for p, mode := range map[string]os.FileMode{plain: 0o644, exe: 0o755} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		argv0 string
		code  int // 0: resolves
	}{
		{filepath.Join(dir, "missing.sh"), 127},
		{filepath.Join(plain, "x"), 127},
		{plain, 126},
		{dir, 126},
		{exe, 0},
	} {
		_, err := Resolve([]string{tc.argv0})
		var se *StartError
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s: %v", tc.argv0, err)
		case tc.code != 0 && (!errors.As(err, &se) || se.Code != tc.code):
			t.Errorf("%s: %v, want a StartError with code %d", tc.argv0, err, tc.code)
		}
	}
	// Relative to the working directory, as a shell runs ./script.sh.
	t.Chdir(dir)
	if _, err := Resolve([]string{"./missing.sh"}); err == nil {
		t.Error("./missing.sh resolved")
	}
}
