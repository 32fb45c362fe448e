package zkconn

import (
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseMembership(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     string
		want     Membership
		problems int
	}{
		{"3.8 ensemble", "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nserver.2=zk2.example:2888:3888:participant;zk2.example:2182\nversion=100000000\n",
			Membership{Members: []Member{{1, "127.0.0.1:2181", false}, {2, "zk2.example:2182", false}}, Version: "100000000"}, 0},
		{"client port alone, observer", "server.4=zk4:2888:3888:observer;2181",
			Membership{Members: []Member{{4, "zk4:2181", true}}}, 0},
		{"IPv6", "server.5=[2001:db8::5]:2888:3888;[2001:db8::5]:2181\nserver.6=[::1]:1:2:participant;[::]:2281",
			Membership{Members: []Member{{5, "[2001:db8::5]:2181", false}, {6, "[::1]:2281", false}}}, 0},
		{"several quorum addresses", "server.7=a.example:2888:3888|b.example:2888:3888;2181",
			Membership{Members: []Member{{7, "a.example:2181", false}}}, 0},
		{"CRLF, comments, other keys", "# c\r\nserver.1=h:1:2;3\r\ngroup.1=1:2:3\r\nweight.1=1\r\n",
			Membership{Members: []Member{{1, "h:3", false}}}, 0},
		{"standalone", "version=0\n", Membership{Version: "0"}, 0},
		{"no client address (static configuration)", "server.1=127.0.0.1:2888:3888:participant\n", Membership{}, 1},
		{"client port 0", "server.1=h:1:2;0\nserver.2=h2:1:2;0.0.0.0:0", Membership{}, 2},
		{"garbage lines", "junk\nserver.x=h:1:2;3\nserver.1=h:1;3\nserver.2=h:1:2:leader;3\nserver.3=[::1:1:2;3\nversion=zz\nserver.4=h:1:2;h:99999",
			Membership{}, 7},
		{"duplicate id", "server.1=a:1:2;3\nserver.1=b:1:2;3", Membership{Members: []Member{{1, "a:3", false}}}, 1},
		{"hostile host", "server.1=a\x1b[2J:1:2;3\nserver.2=b:1:2;c/d:3\nserver.3=" + strings.Repeat("a", 300) + ":1:2;3", Membership{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ParseMembership([]byte(tc.data))
			if !reflect.DeepEqual(got, tc.want) || len(problems) != tc.problems {
				t.Errorf("got %+v, problems %q; want %+v and %d problems", got, problems, tc.want, tc.problems)
			}
			for _, p := range problems {
				if strings.ContainsAny(p, "\x1b\n") {
					t.Errorf("problem %q carries a control character", p)
				}
			}
		})
	}
}

// TestParseMembershipLimits: a huge node, or one with more members than
// an ensemble can have, is ignored whole, with one problem said.
func TestParseMembershipLimits(t *testing.T) {
	huge := []byte("server.1=h:1:2;3\n" + strings.Repeat("#", maxConfigBytes))
	if m, p := ParseMembership(huge); len(m.Members) != 0 || len(p) != 1 {
		t.Errorf("huge node: %d members, problems %q", len(m.Members), p)
	}
	var b strings.Builder
	for i := range maxMembers + 1 {
		b.WriteString("server." + strconv.Itoa(i) + "=h:1:2;3\n")
	}
	if m, p := ParseMembership([]byte(b.String())); len(m.Members) != 0 || len(p) != 1 {
		t.Errorf("%d members: %d kept, problems %q", maxMembers+1, len(m.Members), p)
	}
}

// FuzzParseMembership: the parser never panics, and every member it
// accepts is dialable as it stands: host:port with a host and a port of 1
// to 65535, each id once, within the limits.
func FuzzParseMembership(f *testing.F) {
	for _, s := range []string{
		"server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=100000000",
		"server.5=[2001:db8::5]:2888:3888;[2001:db8::5]:2181", "server.4=zk4:2888:3888:observer;2181",
		"server.1=h:1:2;0", "server.1=[::1]:1:2;[::]:3", "server.7=a:1:2|b:1:2;3", "server.=", "=", ";",
		"server.1=[:1:2;3", "server.1=h:1:2;[", "server.-1=h:1:2;3", "server.1=h:1:2;h:",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _ := ParseMembership(data)
		if len(m.Members) > maxMembers {
			t.Fatalf("%d members", len(m.Members))
		}
		seen := map[int64]bool{}
		for _, mem := range m.Members {
			host, port, err := net.SplitHostPort(mem.Addr)
			if err != nil || host == "" {
				t.Fatalf("member %+v: not host:port: %v", mem, err)
			}
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				t.Fatalf("member %+v: port %q", mem, port)
			}
			if strings.ContainsAny(host, " /\x00\n") {
				t.Fatalf("member %+v: host %q", mem, host)
			}
			if seen[mem.ID] {
				t.Fatalf("id %d twice", mem.ID)
			}
			seen[mem.ID] = true
		}
	})
}
