package zktest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// partitionOpts keep partitions quick: a follower that hears nothing from
// its leader gives up after SyncLimit × TickTime = 2s.
var partitionOpts = Options{TickTime: 200 * time.Millisecond, SyncLimit: 10, InitLimit: 10, PeerProxies: true}

// startPartitionable starts a 3-server ensemble whose peer links go
// through proxies, stopped when the test ends.
func startPartitionable(t *testing.T) *Cluster {
	t.Helper()
	NeedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	c, err := StartEnsemble(ctx, 3, partitionOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	t.Logf("ensemble with peer proxies serving after %s", time.Since(t0).Round(time.Millisecond))
	return c
}

// modeNow is the server's mode, or "" when it does not serve.
func modeNow(s *Server) string {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	m, err := s.Mode(ctx)
	if err != nil {
		return ""
	}
	return m
}

// leaderIndex waits for a single leader and returns its index.
func leaderIndex(t *testing.T, c *Cluster) int {
	t.Helper()
	l, err := c.Leader(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return l.ID() - 1
}

// heal rejoins every server and waits until all three serve again.
func heal(t *testing.T, c *Cluster) {
	t.Helper()
	t0 := time.Now()
	c.HealAll()
	if err := c.WaitServing(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Logf("all three serving again %s after healing", time.Since(t0).Round(time.Millisecond))
}

func TestPeerProxies(t *testing.T) {
	c := startPartitionable(t)
	tick, sync := partitionOpts.TickTime, time.Duration(partitionOpts.SyncLimit)*partitionOpts.TickTime

	// A silent partition: the follower keeps serving from its own state
	// until SyncLimit ticks pass without a word from the leader, then
	// leaves. The leader pings every half tick, so it cannot leave much
	// earlier than SyncLimit × TickTime − TickTime.
	t.Run("follower blackholed", func(t *testing.T) {
		defer heal(t, c)
		leader := leaderIndex(t, c)
		f := (leader + 1) % 3
		c.Isolate(f, (*Proxy).Blackhole)
		t0 := time.Now()
		Eventually(t, sync+10*time.Second, "the isolated follower to stop serving", func() bool {
			return modeNow(c.Server(f)) == ""
		})
		served := time.Since(t0)
		t.Logf("the isolated follower served for %s (SyncLimit × TickTime = %s)", served.Round(time.Millisecond), sync)
		if served < sync-tick {
			t.Errorf("the follower left after %s, before SyncLimit × TickTime − TickTime: the links were not silent", served)
		}
		if served > sync+5*time.Second {
			t.Errorf("the follower left only after %s, long after SyncLimit × TickTime (%s)", served, sync)
		}
		if m := modeNow(c.Server(leader)); m != "leader" {
			t.Errorf("the majority's leader now reports %q", m)
		}
		// Cut off, it must stay out: it can neither follow nor lead.
		for range 5 {
			if m := modeNow(c.Server(f)); m != "" {
				t.Fatalf("the isolated server serves again as %s", m)
			}
			time.Sleep(2 * tick)
		}
	})

	// Refused connections are noticed at once, not after SyncLimit.
	t.Run("follower cut", func(t *testing.T) {
		defer heal(t, c)
		leader := leaderIndex(t, c)
		f := (leader + 2) % 3
		c.Isolate(f, (*Proxy).Cut)
		t0 := time.Now()
		Eventually(t, sync+10*time.Second, "the isolated follower to stop serving", func() bool {
			return modeNow(c.Server(f)) == ""
		})
		t.Logf("the cut-off follower stopped serving after %s", time.Since(t0).Round(time.Millisecond))
		if d := time.Since(t0); d >= sync {
			t.Errorf("a cut follower took %s to leave, as long as a silent one", d)
		}
	})

	t.Run("leader blackholed", func(t *testing.T) {
		defer heal(t, c)
		old := leaderIndex(t, c)
		c.Isolate(old, (*Proxy).Blackhole)
		t0 := time.Now()
		var next int
		Eventually(t, sync+20*time.Second, "a new leader among the other two", func() bool {
			for i := range 3 {
				if i != old && modeNow(c.Server(i)) == "leader" {
					next = i
					return true
				}
			}
			return false
		})
		t.Logf("server %d leads after %s (SyncLimit × TickTime = %s)", next+1, time.Since(t0).Round(time.Millisecond), sync)
		Eventually(t, 10*time.Second, "the old leader to stop serving", func() bool { return modeNow(c.Server(old)) == "" })
		other := 3 - old - next
		Eventually(t, 10*time.Second, "the other member to follow", func() bool { return modeNow(c.Server(other)) == "follower" })
	})

	t.Run("healed", func(t *testing.T) {
		// After every partition above, the ensemble is whole: three serving,
		// one leader, and a write through one server is read at another.
		leaderIndex(t, c)
		for i := range 3 {
			if modeNow(c.Server(i)) == "" {
				t.Fatalf("server %d does not serve after healing", i+1)
			}
		}
		a, _ := connect(t, []string{c.Server(0).Addr()}, 10*time.Second)
		b, _ := connect(t, []string{c.Server(2).Addr()}, 10*time.Second)
		if _, err := a.Create("/healed", []byte("x"), 0, acl); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Sync("/healed"); err != nil {
			t.Fatal(err)
		}
		if data, _, err := b.Get("/healed"); err != nil || string(data) != "x" {
			t.Fatalf("read %q, %v", data, err)
		}
	})
}

// TestElectionGreeting: the rewrite keeps version and id and replaces the
// advertised address, whatever its length.
func TestElectionGreeting(t *testing.T) {
	var adv atomic.Pointer[string]
	a := "127.0.0.1:40001"
	adv.Store(&a)
	in := binary.BigEndian.AppendUint64(nil, uint64(0xffffffffffff0000)) // protocol version -65536
	in = binary.BigEndian.AppendUint64(in, 2)
	in = binary.BigEndian.AppendUint32(in, 14)
	in = append(in, "127.0.0.1:1234"...)
	in = append(in, "rest"...)
	r := bufio.NewReader(bytes.NewReader(in))
	out, err := electionGreeting(&adv)(r)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte(nil), in[:16]...), 0, 0, 0, 15)
	want = append(want, a...)
	if !bytes.Equal(out, want) {
		t.Fatalf("got %q, want %q", out, want)
	}
	if rest, _ := r.ReadString(0); rest != "rest" {
		t.Fatalf("the rest of the stream is %q", rest)
	}
	// A bare server id (no version, no address) passes unchanged.
	bare := binary.BigEndian.AppendUint64(nil, 3)
	out, err = electionGreeting(&adv)(bufio.NewReader(bytes.NewReader(bare)))
	if err != nil || !bytes.Equal(out, bare) {
		t.Fatalf("bare id: %q, %v", out, err)
	}
}

// TestPeerProxyWaitsForTarget: a peer proxy accepts before its target
// listens (a new leader opens its quorum port just after the election);
// the connection must reach the target once it does, not be closed.
func TestPeerProxyWaitsForTarget(t *testing.T) {
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	target := "127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := listenProxy(target, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the target is not listening yet
	ln, err := net.Listen("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // echo one connection
		if c, err := ln.Accept(); err == nil {
			io.Copy(c, c)
			c.Close()
		}
	}()
	conn.SetDeadline(time.Now().Add(peerDialPatience))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}
}

// TestIsolateNeedsPeerProxies: the shared ensemble has direct links.
func TestIsolateNeedsPeerProxies(t *testing.T) {
	e := sharedEnsemble(t)
	defer func() {
		if recover() == nil {
			t.Fatal("Isolate on an ensemble without peer proxies did not panic")
		}
	}()
	e.Isolate(0, (*Proxy).Cut)
}
