package zkconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUnresolvableHostSkipped: a connect string with a name that does not
// resolve still connects through the server that does, with one warning.
func TestUnresolvableHostSkipped(t *testing.T) {
	var mu sync.Mutex
	var warnings []string
	warnf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, fmt.Sprintf(format, args...))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servers := append([]string{"zk3.gone.invalid:2181"}, server(t).Addrs()...)
	c, err := Dial(ctx, Options{ConnString: ConnString{Servers: servers}, Warnf: warnf})
	if err != nil {
		t.Fatalf("one unresolvable host failed the connect: %v", err)
	}
	defer c.Close()
	if _, err := c.Children(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "zk3.gone.invalid:2181") {
		t.Errorf("warnings = %q, want one naming the host", warnings)
	}
}

// TestNoHostResolves: with no resolvable host the connect fails at once as
// unavailable, naming every host.
func TestNoHostResolves(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	_, err := Dial(ctx, Options{ConnString: ConnString{Servers: []string{"a.gone.invalid:2181", "b.gone.invalid:2181"}},
		ConnectTimeout: 10 * time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	for _, h := range []string{"a.gone.invalid:2181", "b.gone.invalid:2181"} {
		if !strings.Contains(err.Error(), h) {
			t.Errorf("%q does not name %s", err, h)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s: it should not wait out the connect timeout", d)
	}
}

// TestHostListRounds: Next reports a new round after trying every server
// without a connect, and a connect starts the round at that server.
func TestHostListRounds(t *testing.T) {
	h := newHostList(context.Background(), time.Second, nil)
	if err := h.Init([]string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}); err != nil {
		t.Fatal(err)
	}
	type step struct {
		server string
		retry  bool
	}
	next := func() step { s, r := h.Next(); return step{s, r} }
	want := []step{{"127.0.0.1:1", false}, {"127.0.0.1:2", false}, {"127.0.0.1:3", false}, {"127.0.0.1:1", true}, {"127.0.0.1:2", false}}
	for i, w := range want {
		if got := next(); got != w {
			t.Fatalf("call %d: %+v, want %+v", i+1, got, w)
		}
	}
	h.Connected() // to :2
	for i, w := range []step{{"127.0.0.1:3", false}, {"127.0.0.1:1", false}, {"127.0.0.1:2", true}, {"127.0.0.1:3", false}} {
		if got := next(); got != w {
			t.Fatalf("after a connect, call %d: %+v, want %+v", i+1, got, w)
		}
	}
	if h.Len() != 3 {
		t.Errorf("Len = %d", h.Len())
	}
}
