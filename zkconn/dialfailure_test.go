package zkconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestConnectionCap: a server that allows N connections from one address
// closes the N+1st during the handshake. That client fails as unavailable
// and says what happened and the likely cause, not "authentication failed:
// EOF" or only a timeout.
func TestConnectionCap(t *testing.T) {
	zktest.NeedServer(t)
	const limit = 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := zktest.StartStandalone(ctx, zktest.Options{MaxClientCnxns: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	for range limit {
		dialT(t, srv.Addrs(), 4*time.Second)
	}
	_, err = Dial(ctx, Options{ConnString: ConnString{Servers: srv.Addrs()}, ConnectTimeout: time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("connection %d of %d allowed: %v", limit+1, limit, err)
	}
	for _, want := range []string{srv.Addrs()[0], "closed the connection during the handshake", "maxClientCnxns"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// TestNotServingNamedFirst: a member of an ensemble that is not serving
// (here, left alone without its quorum; likewise during every election)
// accepts connections and closes each at its ConnectRequest, just like a
// server over its connection cap. That is the likelier cause, so the
// message names it before the cap.
func TestNotServingNamedFirst(t *testing.T) {
	ctx, e := zktest.OwnEnsemble(t, 2*time.Minute, zktest.Options{})
	alone := e.Server(0)
	for _, s := range e.Servers()[1:] {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Dial(ctx, Options{ConnString: ConnString{Servers: []string{alone.Addr()}}, ConnectTimeout: 2 * time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a member without its quorum gave a session: %v", err)
	}
	msg := err.Error()
	notServing, cap := strings.Index(msg, "not serving"), strings.Index(msg, "maxClientCnxns")
	if !strings.Contains(msg, "closed the connection during the handshake") || notServing < 0 || cap < notServing {
		t.Errorf("%q: want the handshake's close, a server not serving named first and the connection cap after it", msg)
	}
}
