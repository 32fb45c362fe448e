package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRead: a kind's file is read whole when it is a regular file within
// its cap, and private when it holds a secret; anything else is refused at
// once with an *Error that names the kind and the file.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := Kind{What: "small file", Max: 8}
	secret := Kind{What: "secret file", Max: 8, Secret: func(b []byte) bool { return strings.Contains(string(b), "pw") }}
	for _, tc := range []struct {
		kind Kind
		name string
		want string // in the error; "" for none
	}{
		{small, file("ok", "12345678", 0o644), ""},
		{small, file("over", "123456789", 0o644), "small file " + dir + "/over is larger than 0 KiB"},
		{small, fifo, "is not a regular file"},
		{small, "/dev/zero", "is not a regular file"},
		{small, dir, "is a directory"},
		{small, filepath.Join(dir, "missing"), "cannot be read: no such file or directory"},
		{secret, file("public", "none", 0o644), ""},
		{secret, file("private", "pw", 0o600), ""},
		{secret, file("leaked", "pw", 0o604), "is accessible by group or others (mode 0604); run chmod 600 " + dir + "/leaked"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := tc.kind.Read(tc.name)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Read did not return", tc.name)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrRefused)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
