package zkconn

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestFollowMembers(t *testing.T) {
	// zk-a names 10.0.0.1; nothing else resolves.
	lookup := func(_ context.Context, host string) ([]string, error) {
		if host == "zk-a" {
			return []string{"10.0.0.1"}, nil
		}
		return nil, errors.New("no such host")
	}
	m := func(addrs ...string) []Member {
		var ms []Member
		for i, a := range addrs {
			ms = append(ms, Member{ID: int64(i + 1), Addr: a})
		}
		return ms
	}
	for _, tc := range []struct {
		name    string
		current []string
		members []Member
		port    string
		want    []string
		named   bool
	}{
		{"members added, the names given kept", []string{"zk-a:2181", "10.0.0.2:2181"}, m("10.0.0.1:2181", "10.0.0.2:2181", "10.0.0.4:2181"), "",
			[]string{"zk-a:2181", "10.0.0.2:2181", "10.0.0.4:2181"}, true},
		{"a member that left is dropped", []string{"zk-a:2181", "10.0.0.2:2181", "10.0.0.4:2181"}, m("10.0.0.2:2181", "10.0.0.4:2181"), "",
			[]string{"10.0.0.2:2181", "10.0.0.4:2181"}, true},
		{"another port is another server", []string{"10.0.0.1:2181"}, m("10.0.0.1:2182"), "",
			[]string{"10.0.0.1:2182"}, false},
		{"TLS: by host, at the list's port", []string{"zk-a:2281"}, m("10.0.0.1:2181", "zk5:2181"), "2281",
			[]string{"zk-a:2281", "zk5:2281"}, true},
		{"IPv6", []string{"[::1]:2181"}, m("[::1]:2181", "[2001:db8::5]:2181"), "",
			[]string{"[::1]:2181", "[2001:db8::5]:2181"}, true},
		{"the same member twice in the list", []string{"zk-a:2181", "10.0.0.1:2181"}, m("10.0.0.1:2181"), "",
			[]string{"zk-a:2181", "10.0.0.1:2181"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, named := followMembers(t.Context(), tc.current, tc.members, tc.port, lookup)
			if !reflect.DeepEqual(got, tc.want) || named != tc.named {
				t.Errorf("got %q, named %v; want %q, %v", got, named, tc.want, tc.named)
			}
		})
	}
}

// TestHostListReplace: a new list starts a new round at its first server;
// an empty or unchanged one changes nothing.
func TestHostListReplace(t *testing.T) {
	h := &hostList{servers: []string{"a:1", "b:1"}, next: -1}
	h.Next()
	if h.replace(nil) || h.replace([]string{"a:1", "b:1"}) {
		t.Fatal("an empty or unchanged list replaced the servers")
	}
	if !h.replace([]string{"c:1", "d:1"}) {
		t.Fatal("a new list was not taken")
	}
	for _, want := range []string{"c:1", "d:1"} {
		if got, retry := h.Next(); got != want || retry {
			t.Fatalf("Next = %q, %v; want %q, false", got, retry, want)
		}
	}
	if _, retry := h.Next(); !retry {
		t.Fatal("a whole round of the new list did not start a retry")
	}
}
