package zkconn

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseConnString(t *testing.T) {
	tests := []struct {
		in      string
		servers []string
		chroot  string
	}{
		{"127.0.0.1:2181", []string{"127.0.0.1:2181"}, ""},
		{"zk1,zk2:2182", []string{"zk1:2181", "zk2:2182"}, ""},
		{"zk1:2181,zk2:2181/apps/ci", []string{"zk1:2181", "zk2:2181"}, "/apps/ci"},
		{"zk1:2181/", []string{"zk1:2181"}, ""},
		{"[::1]:2181,[fe80::1]", []string{"[::1]:2181", "[fe80::1]:2181"}, ""},
		{" zk1:1 , zk2:2 ", []string{"zk1:1", "zk2:2"}, ""},
		{"zk1:0002181,zk2:+2", []string{"zk1:2181", "zk2:2"}, ""}, // found by FuzzParseConnString
	}
	for _, tt := range tests {
		got, err := ParseConnString(tt.in)
		if err != nil {
			t.Errorf("ParseConnString(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got.Servers, tt.servers) || got.Chroot != tt.chroot {
			t.Errorf("ParseConnString(%q) = %v %q, want %v %q", tt.in, got.Servers, got.Chroot, tt.servers, tt.chroot)
		}
	}
}

func TestParseConnStringErrors(t *testing.T) {
	for _, in := range []string{"", ",", "zk1,,zk2", "zk1:0", "zk1:70000", "zk1:abc",
		"zk1/apps/", "zk1/a//b", "zk1/zookeeper", "::1:2181", ":2181",
		"[0[0", "a]b:1", "[[::1]]:1", "] 0", "zk 1:2181", "[ ::1]"} { // brackets or space in a host: found by FuzzParseConnString
		if _, err := ParseConnString(in); !errors.Is(err, ErrBadConnString) {
			t.Errorf("ParseConnString(%q) = %v, want ErrBadConnString", in, err)
		}
	}
}

func TestValidatePath(t *testing.T) {
	for _, ok := range []string{"/", "/locks/job", "/a", "/zookeeperx", "/locks/job-1.2_x", "/ünïcode"} {
		if err := ValidatePath(ok); err != nil {
			t.Errorf("ValidatePath(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "locks/job", "/locks/", "/locks//job", "/locks/./job",
		"/locks/../job", "/zookeeper", "/zookeeper/quota", "/a\x00b", "/a\x7fb", "/.", "/..",
		"/\U0001F600"} { // the server sees a surrogate pair: found by FuzzValidatePath
		if err := ValidatePath(bad); !errors.Is(err, ErrBadPath) {
			t.Errorf("ValidatePath(%q) = %v, want ErrBadPath", bad, err)
		}
	}
}

func TestParseAuth(t *testing.T) {
	a, err := ParseAuth("digest:alice:s3:cr3t")
	if err != nil || a.Scheme != "digest" || a.Credentials != "alice:s3:cr3t" || a.User() != "alice" {
		t.Fatalf("ParseAuth = %+v, %v", a, err)
	}
	for _, bad := range []string{"", "digest", "digest:", "digest:alice", "digest::pw", "sasl:x:y", ":a:b"} {
		if _, err := ParseAuth(bad); !errors.Is(err, ErrBadAuth) {
			t.Errorf("ParseAuth(%q) = %v, want ErrBadAuth", bad, err)
		}
	}
	if acl := (*Auth)(nil).ACL(); len(acl) != 1 || acl[0].Scheme != "world" {
		t.Errorf("open ACL = %+v", acl)
	}
	if acl := a.ACL(); len(acl) != 2 || acl[0].Scheme != "auth" || acl[1].Perms != 1 {
		t.Errorf("auth ACL = %+v", acl)
	}
}
