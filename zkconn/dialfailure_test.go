package zkconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
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
