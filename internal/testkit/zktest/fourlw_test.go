package zktest

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Replies captured verbatim from ZooKeeper 3.8.0.
const (
	wchpSample = "/a\n\t0x10000035df10001\n\t0x10000035df10000\n/nonexist\n\t0x10000035df10001\n\n"
	wchcSample = "0x10000035df10000\n\t/a\n0x10000035df10001\n\t/a\n\t/nonexist\n\n"
	srvrSample = "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n" +
		"Latency min/avg/max: 0/0.0/0\nReceived: 2\nSent: 1\nConnections: 1\nOutstanding: 0\n" +
		"Zxid: 0x0\nMode: standalone\nNode count: 5\n"
	statSample = "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\nClients:\n" +
		" /127.0.0.1:47834[1](queued=0,recved=4,sent=4)\n /127.0.0.1:47908[0](queued=0,recved=1,sent=0)\n\n" +
		"Latency min/avg/max: 0/3.875/13\nReceived: 20\nSent: 20\nConnections: 3\nOutstanding: 0\n" +
		"Zxid: 0x4\nMode: follower\nNode count: 7\n"
	mntrSample = "zk_version\t3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n" +
		"zk_server_state\tstandalone\nzk_ephemerals_count\t0\nzk_avg_latency\t0.0\n" +
		"zk_znode_count\t5\nzk_watch_count\t0\n"
	notServingSample = "This ZooKeeper instance is not currently serving requests\n"
	notWhitelisted   = "wchp is not executed because it is not in the whitelist.\n"
)

func TestParseWchp(t *testing.T) {
	got, err := parseWchp(wchpSample)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{
		"/a":        {0x10000035df10000, 0x10000035df10001},
		"/nonexist": {0x10000035df10001},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got, err := parseWchp("\n"); err != nil || len(got) != 0 {
		t.Fatalf("empty reply: %v, %v", got, err)
	}
	if _, err := parseWchp(notServingSample); !errors.Is(err, errNotServing) {
		t.Fatalf("not serving: %v", err)
	}
	if _, err := parseWchp(notWhitelisted); err == nil {
		t.Fatal("whitelist refusal parsed without error")
	}
	if _, err := parseWchp("\t0x1\n"); err == nil {
		t.Fatal("session before path parsed without error")
	}
	if _, err := parseWchp("/a\n\tzzz\n"); err == nil {
		t.Fatal("bad session id parsed without error")
	}
}

func TestParseWchs(t *testing.T) {
	s, err := parseWchs("2 connections watching 3 paths\nTotal watches:4\n")
	if err != nil || s != (WatchSummary{Connections: 2, Paths: 3, Watches: 4}) {
		t.Errorf("parseWchs = %+v, %v", s, err)
	}
	if _, err := parseWchs("This ZooKeeper instance is not currently serving requests\n"); err == nil {
		t.Error("a refusal parsed without error")
	}
}

func TestParseSrvr(t *testing.T) {
	m, err := parseSrvr(srvrSample)
	if err != nil {
		t.Fatal(err)
	}
	if m["Mode"] != "standalone" || m["Node count"] != "5" || m["Zxid"] != "0x0" {
		t.Fatalf("got %v", m)
	}
	m, err = parseSrvr(statSample)
	if err != nil {
		t.Fatal(err)
	}
	if m["Mode"] != "follower" || m["Connections"] != "3" {
		t.Fatalf("got %v", m)
	}
	if _, err := parseSrvr(notServingSample); !errors.Is(err, errNotServing) {
		t.Fatalf("not serving: %v", err)
	}
}

func TestParseMntr(t *testing.T) {
	m, err := parseMntr(mntrSample)
	if err != nil {
		t.Fatal(err)
	}
	if m["zk_server_state"] != "standalone" || m["zk_znode_count"] != "5" ||
		!strings.HasPrefix(m["zk_version"], "3.8.0-") || !strings.HasSuffix(m["zk_version"], "UTC") {
		t.Fatalf("got %v", m)
	}
	if _, err := parseMntr("no tab here\n"); err == nil {
		t.Fatal("malformed line parsed without error")
	}
	if _, err := parseMntr(notServingSample); !errors.Is(err, errNotServing) {
		t.Fatalf("not serving: %v", err)
	}
}

func TestSessionIDRoundTrip(t *testing.T) {
	for _, s := range []string{"0x0", "0x10000035df10000", "0xff00000000000001"} {
		id, err := parseSessionID(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatSessionID(id); got != s {
			t.Errorf("%s -> %d -> %s", s, id, got)
		}
	}
	if _, err := parseSessionID("10"); err == nil {
		t.Error("id without 0x accepted")
	}
}

func TestFourLetterArgs(t *testing.T) {
	if _, err := fourLetter(context.Background(), shared(t).Server(0).Addr(), "status"); err == nil {
		t.Fatal("five-letter command accepted")
	}
}

// A server that accepts but never answers must not hang fourLetter.
func TestFourLetterHonoursContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = fourLetter(ctx, ln.Addr().String(), "ruok")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestFourLetterLive checks the helpers against the real server, including
// the surprising fact that wchp lists only data watches.
func TestFourLetterLive(t *testing.T) {
	ctx := testCtx(t)
	addr := shared(t).Server(0).Addr()
	if out, err := fourLetter(ctx, addr, "ruok"); err != nil || out != "imok" {
		t.Fatalf("ruok: %q %v", out, err)
	}
	c1, _ := connect(t, []string{addr}, 4*time.Second)
	c2, _ := connect(t, []string{addr}, 4*time.Second)

	before, err := Mntr(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Create("/fourlw", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	defer c1.Delete("/fourlw", -1)
	if _, err := c1.Create("/fourlw/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c1.ExistsW("/fourlw"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c2.GetW("/fourlw"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c2.ExistsW("/fourlw-missing"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c2.ChildrenW("/fourlw"); err != nil {
		t.Fatal(err)
	}

	w, err := Wchp(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := c1.SessionID(), c2.SessionID()
	if !reflect.DeepEqual(w["/fourlw"], sortedIDs(s1, s2)) {
		t.Errorf("wchp /fourlw = %v, want %v and %v", w["/fourlw"], s1, s2)
	}
	if !reflect.DeepEqual(w["/fourlw-missing"], []int64{s2}) {
		t.Errorf("wchp /fourlw-missing = %v, want [%v]", w["/fourlw-missing"], s2)
	}

	// wchs sums wchp up: the two sessions watch the two paths with three
	// data watches; the child watch is not among them.
	if s, err := Wchs(ctx, addr); err != nil || s != (WatchSummary{Connections: 2, Paths: 2, Watches: 3}) {
		t.Errorf("wchs = %+v, %v; want 2 connections, 2 paths, 3 watches", s, err)
	}

	after, err := Mntr(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	delta := func(k string) int {
		a, _ := strconv.Atoi(after[k])
		b, _ := strconv.Atoi(before[k])
		return a - b
	}
	// Three data watches on two paths (wchp) plus one child watch, which
	// only zk_watch_count sees.
	if d := delta("zk_watch_count"); d != 4 {
		t.Errorf("zk_watch_count grew by %d, want 4 (3 data + 1 child watch)", d)
	}
	if d := delta("zk_ephemerals_count"); d != 1 {
		t.Errorf("zk_ephemerals_count grew by %d, want 1", d)
	}
	if d := delta("zk_znode_count"); d != 2 {
		t.Errorf("zk_znode_count grew by %d, want 2", d)
	}

	cons, err := Cons(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cons, "sid="+formatSessionID(s1)) {
		t.Errorf("cons lacks session %s:\n%s", formatSessionID(s1), cons)
	}
	stat, err := Stat(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stat, "Mode: standalone") {
		t.Errorf("stat:\n%s", stat)
	}
}

func sortedIDs(a, b int64) []int64 {
	if a > b {
		a, b = b, a
	}
	return []int64{a, b}
}

func TestParseConsSession(t *testing.T) {
	const out = " /127.0.0.1:40036[0](queued=0,recved=1,sent=0)\n" +
		" /127.0.0.1:40020[1](queued=0,recved=12,sent=12,sid=0x10000a1b2c30001,lop=PING,est=1700000000000,to=4000,lcxid=0x1f,lzxid=0xffffffffffffffff,lresp=1700000001000,llat=0,minlat=0,avglat=0,maxlat=1)\n" +
		" /127.0.0.1:40024[1](queued=0,recved=3,sent=3,sid=0x10000a1b2c300010,lop=SYNC,est=1700000000000,to=4000,lcxid=0x2,lzxid=0x5,lresp=1700000001000,llat=0,minlat=0,avglat=0,maxlat=1)\n"
	c, ok, err := parseConsSession(out, 0x10000a1b2c30001)
	if err != nil || !ok {
		t.Fatalf("%v, %v", ok, err)
	}
	if want := (SessionConn{Received: 12, LastXid: 0x1f, LastOp: "PING", Timeout: 4 * time.Second}); c != want {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	if _, ok, err := parseConsSession(out, 0x10000a1b2c3); ok || err != nil {
		t.Fatalf("an absent session: %v, %v", ok, err)
	}
}

// TestParseSessionID: ZKLOCK_SESSION_ID as a command writes it to a file
// reads back as the id that `cons` names, a server id of 128 or more (the
// top bit set) included.
func TestParseSessionID(t *testing.T) {
	for _, id := range []int64{0x10000a1b2c30001, -0x7ffff5e4d3cfffff} {
		for _, s := range []string{formatSessionID(id), formatSessionID(id) + "\n", strings.TrimPrefix(formatSessionID(id), "0x")} {
			if got, err := ParseSessionID(s); err != nil || got != id {
				t.Errorf("%q: %#x, %v; want %#x", s, got, err, id)
			}
		}
	}
	for _, s := range []string{"", "0x", "0xzz", "0x1ffffffffffffffff"} {
		if _, err := ParseSessionID(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}
