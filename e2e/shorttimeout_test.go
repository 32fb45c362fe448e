package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// verboseSafe is -v's line with the round trip and the smallest safe
// session timeout, which run prints on every connect.
var verboseSafe = regexp.MustCompile(`round trip [0-9.]+(µs|ms|s); the smallest session timeout that rides out a leader election of 2.7s at this round trip is ([0-9.]+)s`)

// TestShortTimeoutSaid: a session timeout too short for the round trip
// measured (4s at 400ms: the link alone needs 5.4s, an election 12.3s) is said once
// when run connects, as a warning in text and in JSON, with the smallest
// safe timeout and the flag; doctor fails its timeout check too, with the
// figure of a standalone server (the link alone, 5.4s). On loopback with the default 10s nothing is said, and -v shows
// the round trip and the smallest safe timeout either way.
func TestShortTimeoutSaid(t *testing.T) {
	proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
	proxy.SetDelay(200 * time.Millisecond)
	slow := []string{"--servers", proxy.Addr(), "--session-timeout", "4s"}

	t.Run("text", func(t *testing.T) {
		r := runWithin(t, 30*time.Second, zklock(t, append([]string{"tryrun", "-v", "--path", lockPath(t)}, append(slow, "--", "true")...)...))
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		warnings := regexp.MustCompile(`(?m)^zklock: warning: session timeout 4s is shorter than ([0-9.]+)s, the smallest that rides out a leader election of 2.7s at a round trip of [0-9.]+ms: .*\(--session-timeout ([0-9.]+)s or more\)$`).FindAllStringSubmatch(r.stderr, -1)
		if len(warnings) != 1 {
			t.Fatalf("want one warning naming the smallest safe timeout, got %d:\n%s", len(warnings), r.stderr)
		}
		safe := parseSeconds(t, warnings[0][1])
		if safe < 11*time.Second || safe > 14*time.Second || warnings[0][2] != warnings[0][1] {
			t.Errorf("smallest safe timeout %s at a 400ms round trip, want about 12.3s:\n%s", safe, r.stderr)
		}
		if m := verboseSafe.FindStringSubmatch(r.stderr); m == nil || m[2] != warnings[0][1] {
			t.Errorf("-v does not show the round trip and %ss:\n%s", warnings[0][1], r.stderr)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := runWithin(t, 30*time.Second, zklock(t, append([]string{"tryrun", "--log-format", "json", "--path", lockPath(t)}, append(slow, "--", "true")...)...))
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		objs := jsonLines(t, r.stderr)
		if names := strings.Join(eventNames(objs), " "); names != "warning acquired started released exit" {
			t.Errorf("events %q, want the warning first:\n%s", names, r.stderr)
		}
		w := firstEvent(t, objs, "warning")
		if msg := fmt.Sprint(w["msg"]); w["level"] != "warning" || !strings.Contains(msg, "session timeout 4s is shorter than") ||
			!strings.Contains(msg, "--session-timeout ") {
			t.Errorf("warning: %v", w)
		}
	})
	t.Run("loopback", func(t *testing.T) {
		r := runWithin(t, 30*time.Second, zklock(t, "tryrun", "-v", "--path", lockPath(t), "--", "true"))
		if r.code != 0 || strings.Contains(r.stderr, "warning") {
			t.Fatalf("exit %d, want 0 and no warning: %s", r.code, r.stderr)
		}
		m := verboseSafe.FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("-v does not show the round trip and the smallest safe timeout:\n%s", r.stderr)
		}
		if safe := parseSeconds(t, m[2]); safe < 7800*time.Millisecond || safe >= 10*time.Second {
			t.Errorf("smallest safe timeout %s on loopback, want from 7.8s", safe)
		}
	})
	t.Run("short on loopback", func(t *testing.T) {
		// A short timeout chosen on a local network is short only of an
		// election: -v says so, a plain run says nothing (a cron job
		// would mail the warning every time).
		r := runWithin(t, 30*time.Second, zklock(t, "--session-timeout", "4s", "tryrun", "--path", lockPath(t), "--", "true"))
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
		}
		r = runWithin(t, 30*time.Second, zklock(t, "--session-timeout", "4s", "tryrun", "-v", "--path", lockPath(t), "--", "true"))
		if m := verboseSafe.FindStringSubmatch(r.stderr); r.code != 0 || m == nil || strings.Contains(r.stderr, "warning") {
			t.Fatalf("exit %d; want 0, -v's smallest safe timeout and no warning:\n%s", r.code, r.stderr)
		}
	})
	t.Run("doctor", func(t *testing.T) {
		code, out, stderr := doctor(t, slow...)
		if code != 69 {
			t.Fatalf("exit %d, want 69", code)
		}
		line(t, out, "FAIL", "timeout", "4s is shorter than ")
		line(t, out, "FAIL", "timeout", "on a standalone server: a slow reply or a reconnect may stop")
		if !strings.Contains(stderr, "(--session-timeout ") {
			t.Errorf("no hint naming --session-timeout: %s", stderr)
		}
		code, out, _ = doctor(t)
		if code != 0 {
			t.Fatalf("exit %d on loopback, want 0", code)
		}
		line(t, out, "ok", "timeout", "10s, at a round trip of")
	})
}

// parseSeconds reads a number of seconds as printed in a message.
func parseSeconds(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s + "s")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
