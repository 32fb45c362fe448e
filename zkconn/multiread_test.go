package zkconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestMultiRead reads many nodes in one request on a real server: data and
// stat, children, a node that is gone and one this client may not read,
// each with its own result, in order, also through a chroot and for more
// reads than fit a small reply. It guards the borrowing of go-zookeeper's
// request method as well: a library that moved it breaks this test.
func TestMultiRead(t *testing.T) {
	conn := zktest.DialT(t, server(t).Addrs())
	root := fmt.Sprintf("/multiread-%d", time.Now().UnixNano())
	mk := func(p string, data []byte, acl []zk.ACL) {
		t.Helper()
		if _, err := conn.Create(p, data, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	open := zk.WorldACL(zk.PermAll)
	mk(root, nil, open)
	mk(root+"/a", []byte("alpha"), open)
	mk(root+"/a/x", nil, open)
	mk(root+"/a/y", nil, open)
	mk(root+"/secret", []byte("s"), zk.DigestACL(zk.PermAll, "alice", "pw"))
	var many []string
	for i := range 600 {
		p := fmt.Sprintf("%s/n%03d", root, i)
		mk(p, []byte(p), open)
		many = append(many, p)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, chroot := range []string{"", root} {
		c := dialT(t, server(t).Addrs(), 4*time.Second)
		if chroot != "" {
			c = dialChroot(t, chroot)
		}
		rel := func(p string) string {
			if chroot == "" {
				return p
			}
			return p[len(chroot):]
		}
		res, err := c.MultiRead(ctx, []Read{
			{Path: rel(root + "/a")},
			{Path: rel(root + "/a"), Children: true},
			{Path: rel(root + "/gone")},
			{Path: rel(root + "/secret")},
			{Path: rel(root + "/gone"), Children: true},
		})
		if err != nil {
			t.Fatalf("chroot %q: %v", chroot, err)
		}
		if len(res) != 5 {
			t.Fatalf("chroot %q: %d results, want 5", chroot, len(res))
		}
		want, wantSt, err := conn.Get(root + "/a")
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Err != nil || string(r.Data) != string(want) || r.Stat == nil || *r.Stat != *wantSt {
			t.Errorf("chroot %q: data %q %+v %v, want %q %+v", chroot, r.Data, r.Stat, r.Err, want, wantSt)
		}
		if r := res[1]; r.Err != nil || !slices.Equal(slices.Sorted(slices.Values(r.Children)), []string{"x", "y"}) {
			t.Errorf("chroot %q: children %q %v", chroot, r.Children, r.Err)
		}
		if r := res[2]; !errors.Is(r.Err, zk.ErrNoNode) {
			t.Errorf("chroot %q: a gone node read %v, want NoNode", chroot, r.Err)
		}
		if r := res[3]; !IsPermission(r.Err) {
			t.Errorf("chroot %q: a forbidden node read %v, want a permission error", chroot, r.Err)
		}
		if r := res[4]; !errors.Is(r.Err, zk.ErrNoNode) {
			t.Errorf("chroot %q: a gone node listed %v, want NoNode", chroot, r.Err)
		}

		var reads []Read
		for _, p := range many {
			reads = append(reads, Read{Path: rel(p)})
		}
		res, err = c.MultiRead(ctx, reads)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil || string(r.Data) != many[i] {
				t.Fatalf("chroot %q: read %d of %d: %q %v", chroot, i, len(many), r.Data, r.Err)
			}
		}
	}
}

func dialChroot(t *testing.T, chroot string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, Options{ConnString: ConnString{Servers: server(t).Addrs(), Chroot: chroot}, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
