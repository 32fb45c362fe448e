package recipe

import (
	"context"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/zkconn"
)

// BenchmarkHandoff times one handoff against the package's real server:
// from the holder's release to the waiter's Acquire returning, the stretch
// in which a waiter must find out whether its own node still exists.
//
//	go test -run '^$' -bench Handoff -benchtime 200x ./lock
//
// "own-watch" is Acquire as built: the waiter's watch on its own node was
// set, together with the one on its predecessor, when it started to wait,
// so the handoff itself adds nothing. "exists-after" adds the one exists
// request that checking the node at the handoff would cost instead.
func BenchmarkHandoff(b *testing.B) {
	for _, mode := range []string{"own-watch", "exists-after"} {
		b.Run(mode, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			holderC, waiterC := benchClient(b), benchClient(b)
			path := "/bench/handoff-" + mode
			addr := shared.Server(b).Addrs()[0]
			for b.Loop() {
				b.StopTimer()
				holder, err := Acquire(ctx, holderC, path, Request{})
				if err != nil {
					b.Fatal(err)
				}
				// The waiter's lease comes back to be released here, with
				// the clock stopped: released in the background, it could
				// still hold its node when the next round's holder joins,
				// which would then wait behind it and watch its own node.
				type result struct {
					l   *Lease
					err error
				}
				got := make(chan result, 1)
				go func() {
					l, err := Acquire(ctx, waiterC, path, Request{})
					if err == nil && mode == "exists-after" {
						err = l.Verify(ctx)
					}
					got <- result{l, err}
				}()
				// Start the clock only once the waiter watches both nodes
				// (a waiter that gave up instead fails the benchmark).
				for deadline := time.Now().Add(30 * time.Second); ; {
					select {
					case r := <-got:
						b.Fatalf("the waiter returned before the release: %v", r.err)
					default:
					}
					if time.Now().After(deadline) {
						w, _ := zktest.Wchp(ctx, addr)
						b.Fatalf("the waiter never watched both nodes: holder %s, %v", holder.Node, w)
					}
					w, err := zktest.Wchp(ctx, addr)
					if err == nil && len(w[holder.Node]) == 1 {
						n := 0
						for p := range w {
							if len(p) > len(path) && p[:len(path)] == path {
								n++
							}
						}
						if n == 2 {
							break
						}
					}
					time.Sleep(time.Millisecond)
				}
				b.StartTimer()
				if err := holder.Release(ctx); err != nil {
					b.Fatal(err)
				}
				r := <-got
				if r.err != nil {
					b.Fatal(r.err)
				}
				b.StopTimer()
				if err := r.l.Release(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer() // b.Loop wants it running
			}
		})
	}
}

func benchClient(b *testing.B) *zkconn.Client {
	cs, err := zkconn.ParseConnString(shared.Server(b).ConnectString())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}
