package config

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func known(k string) bool { return k == "servers" || k == "session_timeout" || k == "tls" }

// TestParse: values keep their text and line; every refusal is one line
// naming the file and the line of the fault.
func TestParse(t *testing.T) {
	f, err := Parse("c.toml", []byte("# fleet\nservers = \"zk1:2181,zk2:2181/locks\"\n\nsession_timeout = 10 # a bare number\ntls = true\n"), known)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Value{"servers": {"zk1:2181,zk2:2181/locks", 2}, "session_timeout": {"10", 4}, "tls": {"true", 5}}
	for k, v := range want {
		if f.Values[k] != v {
			t.Errorf("%s = %+v, want %+v", k, f.Values[k], v)
		}
	}
	if e := f.At("session_timeout", "bad").Error(); e != "c.toml:4: session_timeout: bad" {
		t.Errorf("At = %q", e)
	}
	for _, tc := range []struct{ doc, want string }{
		{"servers = \"a\"\nsrevers = \"b\"\n", `c.toml:2: unknown key "srevers"`},
		{"\n\nservers = \"a\n", "c.toml:3: "},
		{"servers = [\"a\"]\n", `c.toml:1: servers: want a string, not a value of kind array`},
		{"servers = \"a\"\nservers = \"b\"\n", `c.toml:2: key "servers" is set twice`},
		{"[zklock]\nservers = \"a\"\n", "c.toml:1: tables are not used: write every key at the top level"},
		{"zk.servers = \"a\"\n", `c.toml:1: unknown key "zk.servers"`},
		{"servers = \"\"\"\nzk1:2181\n\"\"\"\n", "c.toml:1: servers: a value is one line"},
	} {
		_, err := Parse("c.toml", []byte(tc.doc), known)
		if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%q: got %v, want %q…", tc.doc, err, tc.want)
		}
	}
}

// TestLoad: the explicit file alone; else the user's file and the system's,
// in that order, each optional; no HOME means no user file.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	user, sys := write("user.toml", "servers = \"u\"\n"), write("sys.toml", "servers = \"s\"\n")
	paths := func(fs []*File) (ps []string) {
		for _, f := range fs {
			ps = append(ps, f.Path)
		}
		return ps
	}
	for _, tc := range []struct {
		name string
		l    Locations
		want []string
	}{
		{"layered", Locations{User: user, System: sys}, []string{user, sys}},
		{"explicit alone", Locations{Explicit: sys, User: user, System: sys}, []string{sys}},
		{"missing optional", Locations{User: filepath.Join(dir, "none"), System: sys}, []string{sys}},
		{"no home", Locations{System: sys}, []string{sys}},
	} {
		fs, _, err := Load(tc.l, known)
		if err != nil || len(paths(fs)) != len(tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, paths(fs), err, tc.want)
			continue
		}
		for i := range tc.want {
			if paths(fs)[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, paths(fs), tc.want)
			}
		}
	}
	if _, _, err := Load(Locations{Explicit: filepath.Join(dir, "none")}, known); err == nil {
		t.Error("a missing explicit file was accepted")
	}
	env := map[string]string{"HOME": "/home/u", "ZKLOCK_CONFIG": ""}
	if l := Locate(func(k string) string { return env[k] }, "ZKLOCK_CONFIG"); l.User != "/home/u/.config/zklock/config.toml" || l.System != SystemPath {
		t.Errorf("Locate = %+v", l)
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if l := Locate(func(k string) string { return env[k] }, "ZKLOCK_CONFIG"); l.User != "/xdg/zklock/config.toml" {
		t.Errorf("Locate with XDG_CONFIG_HOME = %+v", l)
	}
	if l := Locate(func(string) string { return "" }, "ZKLOCK_CONFIG"); l.User != "" {
		t.Errorf("Locate without HOME = %+v", l)
	}
}

// TestReadRefusals: what is not a small regular file is refused at once
// with one line: a directory, a FIFO (which would block the open for a
// writer), a device that never ends, and a file over MaxSize. A UTF-8 byte
// order mark and CRLF line ends are read as any file.
func TestReadRefusals(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# comment\n"), MaxSize/10+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, dir + ": is a directory"},
		{fifo, fifo + ": is not a regular file"},
		{"/dev/zero", "/dev/zero: is not a regular file"},
		{big, big + ": is larger than 64 KiB"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Read(tc.path, false, known)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s: got %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Read did not return", tc.path)
		}
	}
	bom := filepath.Join(dir, "bom.toml")
	if err := os.WriteFile(bom, []byte("\ufeffservers = \"a\"\r\ntls = true\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bom, false, known)
	if err != nil || f.Values["servers"] != (Value{"a", 1}) || f.Values["tls"] != (Value{"true", 2}) {
		t.Errorf("a file with a BOM and CRLF: %+v, %v", f, err)
	}
}
