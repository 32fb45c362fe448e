package zkconn

import (
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzParseConnString: the parser never panics, and what it accepts is
// usable as it stands: every server a host and a canonical port, a chroot
// that is a valid path, and a rendering that parses back to the same value.
func FuzzParseConnString(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:2181", "zk1,zk2:2182", "zk1:2181,zk2:2181/apps/ci", "zk1:2181/",
		"[::1]:2181,[fe80::1]", " zk1:1 , zk2:2 ", "", ",", "zk1,,zk2", "zk1:0",
		"zk1:70000", "zk1:abc", "zk1/apps/", "zk1/a//b", "zk1/zookeeper", "::1:2181",
		":2181", "127.0.0.1:2181,zk3.gone.invalid:2181", "zk1:+1", "zk1:0002181",
		"[::1%eth0]:2181", "zk1/\U0001F600", "zk1/a\uFFFE", "[]:1", "[a]:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseConnString(s)
		if err != nil {
			return
		}
		if len(cs.Servers) == 0 {
			t.Fatalf("%q: accepted with no servers", s)
		}
		for _, srv := range cs.Servers {
			host, port, err := net.SplitHostPort(srv)
			if err != nil || host == "" {
				t.Fatalf("%q: server %q is not host:port: %v", s, srv, err)
			}
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
				t.Fatalf("%q: server %q has port %q, not a canonical port number", s, srv, port)
			}
		}
		if cs.Chroot != "" {
			if err := ValidatePath(cs.Chroot); err != nil {
				t.Fatalf("%q: chroot %q: %v", s, cs.Chroot, err)
			}
		}
		again, err := ParseConnString(cs.String())
		if err != nil || !reflect.DeepEqual(again, cs) {
			t.Fatalf("%q renders as %q, which parses to %+v, %v; want %+v", s, cs.String(), again, err, cs)
		}
	})
}

// FuzzValidatePath: ValidatePath never panics, accepts only what the server
// accepts (zklock may refuse more, never less), and an accepted path splits
// into names that Join puts back together.
func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{
		"/a", "/a/b", "/locks/deploy-1732377600", "", "/", "a", "/a/", "/a//b", "/a/./b",
		"/a/../b", "/..", "/.a", "/a..", "/zookeeper", "/zookeeper/x", "/zookeeperx",
		"/a\x00b", "/a\x1fb", "/a\u007fb", "/a\u0085b", "/a\uFFFE", "/a\uFFEF", "/a\uF8FF",
		"/a\uF900", "/\U0001F600", "/caf\u00e9", "/a\xffb", "/日本/語",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if ValidatePath(p) != nil {
			return
		}
		if !serverAccepts(p) {
			t.Fatalf("ValidatePath accepts %q, which the server refuses", p)
		}
		if p == "/" {
			return // valid, and has no names to split
		}
		names := strings.Split(p[1:], "/")
		if got := Join("/", names...); got != p {
			t.Fatalf("Join(/, %q) = %q, want %q", names, got, p)
		}
		i := strings.LastIndexByte(p, '/')
		parent := p[:i]
		if parent == "" {
			parent = "/"
		}
		if got := Join(parent, p[i+1:]); got != p {
			t.Fatalf("Join(%q, %q) = %q, want %q", parent, p[i+1:], got, p)
		}
		if child := Join(p, "child"); ValidatePath(child) != nil {
			t.Fatalf("%q is valid but its child %q is not", p, child)
		}
	})
}

// serverAccepts is ZooKeeper's own rule (PathUtils.validatePath), written
// out independently of ValidatePath. The server checks UTF-16 code units,
// so a character outside the BMP arrives as two surrogates, which it
// refuses; bytes that are not UTF-8 decode to U+FFFD, which it refuses too.
func serverAccepts(p string) bool {
	if !utf8.ValidString(p) {
		return false
	}
	u := utf16.Encode([]rune(p))
	if len(u) == 0 || u[0] != '/' {
		return false
	}
	if len(u) == 1 {
		return true
	}
	if u[len(u)-1] == '/' {
		return false
	}
	endsName := func(i int) bool { return i+1 == len(u) || u[i+1] == '/' }
	for i := 1; i < len(u); i++ {
		c, prev := u[i], u[i-1]
		switch {
		case c == 0:
			return false
		case c == '/' && prev == '/':
			return false
		case c == '.' && prev == '.' && u[i-2] == '/' && endsName(i):
			return false
		case c == '.' && prev == '/' && endsName(i):
			return false
		case c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			return false
		}
	}
	return true
}
