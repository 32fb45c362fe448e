package recipe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

// done waits for l.Done and returns l.Err.
func doneErr(t *testing.T, l *Lease) error {
	t.Helper()
	select {
	case <-l.Done():
		return l.Err()
	case <-time.After(20 * time.Second):
		t.Fatal("Done never closed")
		return nil
	}
}

// TestLeaseDone: Done stays open while the lease holds, and closes with
// the reason: the node deleted, the session expired, the lease released,
// the client closed. A revocation request is delivered, and the lease
// still holds.
func TestLeaseDone(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	conn := raw(t)

	t.Run("node deleted", func(t *testing.T) {
		l, err := Acquire(ctx, client(t), testPath(t), Request{Data: zdata()})
		if err != nil {
			t.Fatal(err)
		}
		if l.Err() != nil {
			t.Fatalf("Err %v while held", l.Err())
		}
		if err := conn.Delete(l.Node, -1); err != nil {
			t.Fatal(err)
		}
		if err := doneErr(t, l); !errors.Is(err, ErrNodeGone) {
			t.Fatalf("Err %v, want ErrNodeGone", err)
		}
	})

	t.Run("revoked, then released", func(t *testing.T) {
		path := testPath(t)
		c := client(t)
		l, err := Acquire(ctx, c, path, Request{Data: zdata()})
		if err != nil {
			t.Fatal(err)
		}
		done := l.Done() // the watch is set before the request
		if _, err := Revoke(ctx, client(t), path, l.Node[len(path)+1:], Revocation{Host: "h", PID: 1}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-l.Revoked():
			if r.Node != l.Node || r.By() == "" {
				t.Fatalf("revocation %+v", r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no revocation delivered")
		}
		select {
		case <-done:
			t.Fatalf("a revocation request ended the lease: %v", l.Err())
		default:
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := doneErr(t, l); !errors.Is(err, ErrReleased) {
			t.Fatalf("Err %v after Release, want ErrReleased", err)
		}
	})

	t.Run("client closed", func(t *testing.T) {
		c := client(t)
		l, err := Acquire(ctx, c, testPath(t), Request{Data: zdata()})
		if err != nil {
			t.Fatal(err)
		}
		l.Done()
		c.Close()
		if err := doneErr(t, l); !errors.Is(err, ErrReleased) {
			t.Fatalf("Err %v after the client closed, want ErrReleased", err)
		}
	})

	t.Run("released before Done", func(t *testing.T) {
		l, err := Acquire(ctx, client(t), testPath(t), Request{Data: zdata()})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := doneErr(t, l); !errors.Is(err, ErrReleased) {
			t.Fatalf("Err %v, want ErrReleased", err)
		}
	})

	t.Run("session expired", func(t *testing.T) {
		proxy := zktest.NewProxyT(t, shared.Server(t).Addrs()[0])
		cs, err := zkconn.ParseConnString(proxy.Addr())
		if err != nil {
			t.Fatal(err)
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := zkconn.Dial(dctx, zkconn.Options{ConnString: cs, SessionTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		l, err := Acquire(ctx, c, testPath(t), Request{Data: zdata()})
		if err != nil {
			t.Fatal(err)
		}
		l.Done()
		proxy.Blackhole()
		zktest.Eventually(t, 20*time.Second, "the server to expire the session", func() bool {
			ok, _, err := conn.Exists(l.Node)
			return err == nil && !ok
		})
		proxy.Heal()
		if err := doneErr(t, l); !errors.Is(err, zkconn.ErrSessionLost) {
			t.Fatalf("Err %v, want ErrSessionLost", err)
		}
	})
}
