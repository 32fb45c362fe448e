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

// statInfo is an os.FileInfo with only what private reads: a mode and an
// owner.
type statInfo struct {
	os.FileInfo
	mode os.FileMode
	uid  uint32
}

func (s statInfo) Mode() os.FileMode { return s.mode }
func (s statInfo) Sys() any          { return &syscall.Stat_t{Uid: s.uid} }

// TestPrivate: a secret's file is private when only its owner may access
// it, or when root owns it and its group may read it at most (libpq's
// rule for client keys: how a system shares a key with a service group).
func TestPrivate(t *testing.T) {
	for _, tc := range []struct {
		mode os.FileMode
		uid  uint32
		want bool
	}{
		{0o600, 1000, true},
		{0o400, 1000, true},
		{0o640, 1000, false}, // a user's own file: private to the user
		{0o604, 1000, false},
		{0o640, 0, true}, // root's, shared with a group (ssl-cert, hadoop)
		{0o440, 0, true},
		{0o660, 0, false}, // the group could rewrite it
		{0o650, 0, false},
		{0o644, 0, false}, // others can read it: leaked
		{0o641, 0, false},
	} {
		if got := private(statInfo{mode: tc.mode, uid: tc.uid}); got != tc.want {
			t.Errorf("mode %04o owner %d: private %v, want %v", tc.mode, tc.uid, got, tc.want)
		}
	}
}
