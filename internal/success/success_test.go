package success

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

// TestNodeNameIsNoContender: the record's name is no contender's in
// zklock's eyes, and holds none of the names by which Curator sorts its
// contenders ("lock-", "__READ__", "__WRIT__", "-lease-") or Kazoo finds its
// own ("__lock__", "__rlock__"), so both sort it by its whole name, after
// every sequence number.
func TestNodeNameIsNoContender(t *testing.T) {
	if c, ok := recipe.ParseContender(NodeName); ok {
		t.Errorf("ParseContender(%q) = %+v, a contender", NodeName, c)
	}
	// The markers by which zklock, Curator and Kazoo tell contenders.
	for _, m := range []string{"-lock-", "-__WRIT__", "-__READ__", "-lease-", "__lock__", "__rlock__", "lock-", "__READ__", "__WRIT__"} {
		if strings.Contains(NodeName, m) {
			t.Errorf("%q contains the marker %q", NodeName, m)
		}
	}
	if NodeName <= "9999999999" {
		t.Errorf("%q sorts before a sequence number", NodeName)
	}
}

// TestForget: Forget deletes the record and returns what it
// deleted; with no record (and no lock path) there is nothing to forget.
// A success recorded between its read and its delete is the one deleted
// and returned. The lock path, a container, is then empty and reaped.
func TestForget(t *testing.T) {
	ctx := shared.Ctx(t, 20*time.Second)
	c := shared.Client(t)
	path := shared.Path(t)
	if s, ok, err := Forget(ctx, c, path); ok || err != nil {
		t.Fatalf("no lock path: forgot %+v, %v, %v; want nothing", s, ok, err)
	}
	var made []string
	if err := c.EnsurePath(ctx, path, &made); err != nil {
		t.Fatal(err)
	}
	record := func(host string) owner.Owner {
		o := owner.New("test", []string{"./job"}, recipe.ModeExclusive)
		o.Host = host
		return o
	}
	if _, err := Write(ctx, c, path, record("first"), time.Now()); err != nil {
		t.Fatal(err)
	}
	rewrites := 0
	forgetRead = func() {
		// The first read sees the first record; a newer success lands
		// before the delete, which must then delete that one instead.
		if rewrites++; rewrites == 1 {
			if _, err := Write(ctx, c, path, record("second"), time.Now()); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { forgetRead = nil })
	s, ok, err := Forget(ctx, c, path)
	if err != nil || !ok || !s.ByZklock || s.Owner.Host != "second" || s.Path != path || s.At.IsZero() {
		t.Fatalf("forgot %+v, %v, %v; want the second record", s, ok, err)
	}
	if rewrites != 2 {
		t.Errorf("read the record %d times, want 2", rewrites)
	}
	if _, ok, err := Read(ctx, c, path); ok || err != nil {
		t.Errorf("a record is left: %v, %v", ok, err)
	}
	if s, ok, err := Forget(ctx, c, path); ok || err != nil {
		t.Errorf("forgetting again: %+v, %v, %v; want nothing", s, ok, err)
	}
	shared.AssertGone(t, path)
}

// TestForgetRefused: a client whose ACL forbids deleting in the
// lock path gets a permission error (exit 77), and the record stays.
func TestForgetRefused(t *testing.T) {
	ctx := shared.Ctx(t, 20*time.Second)
	path := shared.Path(t)
	conn := shared.Raw(t)
	if err := conn.AddAuth("digest", []byte("owner:pw")); err != nil {
		t.Fatal(err)
	}
	acl := append(zk.DigestACL(zk.PermAll, "owner", "pw"), zk.WorldACL(zk.PermRead)...)
	var made []string
	if err := shared.Client(t).EnsurePath(ctx, path[:strings.LastIndexByte(path, '/')], &made); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(path, nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(path+"/"+NodeName, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Delete(path+"/"+NodeName, -1)
		conn.Delete(path, -1)
	})
	_, ok, err := Forget(ctx, shared.Client(t), path)
	if ok || !zkconn.IsPermission(err) || !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("forgot: %v, %v; want a permission error", ok, err)
	}
	if !strings.Contains(err.Error(), "the ACL of "+path+" does not let this client delete nodes in it") {
		t.Errorf("error %q does not name the ACL that refused", err)
	}
	if _, ok, err := Read(ctx, shared.Client(t), path); !ok || err != nil {
		t.Errorf("the record is gone after a refused forget: %v, %v", ok, err)
	}
}

// TestForgetUnreadableSuccess: a record this client may not read (another
// identity wrote it with an ACL of its own) is forgotten all the same, as
// forgetting needs only the right to delete in the lock path: the job it
// blocks (its every run exits 77 reading it) can run again.
func TestForgetUnreadableSuccess(t *testing.T) {
	ctx := shared.Ctx(t, 20*time.Second)
	path := shared.Path(t)
	var made []string
	if err := shared.Client(t).EnsurePath(ctx, path, &made); err != nil {
		t.Fatal(err)
	}
	conn := shared.Raw(t)
	if _, err := conn.Create(path+"/"+NodeName, []byte("forged"), 0, zk.DigestACL(zk.PermAll, "other", "pw")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.AddAuth("digest", []byte("other:pw"))
		conn.Delete(path+"/"+NodeName, -1)
		conn.Delete(path, -1)
	})
	if _, _, err := Read(ctx, shared.Client(t), path); !zkconn.IsPermission(err) {
		t.Fatalf("reading the record: %v, want a permission error", err)
	}
	s, ok, err := Forget(ctx, shared.Client(t), path)
	if !ok || err != nil || s.At.IsZero() || s.Path != path {
		t.Fatalf("forgot %+v, %v, %v; want the unreadable record, with its time", s, ok, err)
	}
	if ok, _, err := conn.Exists(path + "/" + NodeName); ok || err != nil {
		t.Errorf("the record is still there: %v, %v", ok, err)
	}
}

func TestMain(m *testing.M) { shared.Main(m) }
