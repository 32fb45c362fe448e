package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// jsonLines parses what zklock wrote on stderr under --log-format json,
// leaving out the command's own lines (given exactly): every other line
// must be one JSON object.
func jsonLines(t *testing.T, stderr string, commands ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if line == "" && stderr == "" {
			break
		}
		if slices.Contains(commands, line) {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Errorf("not a JSON object on zklock's stderr: %q", line)
			continue
		}
		out = append(out, obj)
	}
	return out
}

// eventNames lists the events in order.
func eventNames(objs []map[string]any) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprint(o["event"]))
	}
	return out
}

// firstEvent returns the first object of event name.
func firstEvent(t *testing.T, objs []map[string]any, name string) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o["event"] == name {
			return o
		}
	}
	t.Fatalf("no %s event in %v", name, eventNames(objs))
	return nil
}

// TestEventsJSON: a run that waits, under --log-format json with a trace
// in the environment, writes only JSON objects on stderr: waiting (naming
// the holder), acquired (with the node, session and fencing token the
// command gets), started, released and exit, each with the trace id. The
// command's own stdout and stderr pass through untouched, and it gets
// TRACEPARENT unchanged.
func TestEventsJSON(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	h := startHolder(t, path)
	dir := t.TempDir()
	script := `echo COMMAND-OUT; echo COMMAND-ERR >&2; printf '%s\n%s\n%s\n%s\n' "$TRACEPARENT" "$ZKLOCK_NODE" "$ZKLOCK_SESSION_ID" "$ZKLOCK_FENCING_TOKEN" > "$1/env"`
	c := zklock(t, "run", "--log-format", "json", "--path", path, "--", "sh", "-c", script, "sh", dir)
	c.Env = append(c.Env, "TRACEPARENT="+traceparent)
	var stdout strings.Builder
	stderr := &syncBuffer{}
	c.Stdout, c.Stderr = &stdout, stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })
	zktest.Eventually(t, 10*time.Second, "the waiting event", func() bool { return strings.Contains(stderr.String(), `"event":"waiting"`) })
	h.Process.Signal(syscall.SIGTERM)
	if err := c.Wait(); err != nil {
		t.Fatalf("the waiter: %v: %s", err, stderr.String())
	}
	if stdout.String() != "COMMAND-OUT\n" {
		t.Errorf("the command's stdout came out as %q", stdout.String())
	}
	objs := jsonLines(t, stderr.String(), "COMMAND-ERR")
	if !strings.Contains(stderr.String(), "\nCOMMAND-ERR\n") {
		t.Errorf("the command's stderr did not pass through as it was: %q", stderr.String())
	}
	if got, want := strings.Join(eventNames(objs), " "), "waiting acquired started released exit"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	for _, o := range objs {
		if o["trace_id"] != "0af7651916cd43dd8448eb211c80319c" || o["path"] != path {
			t.Errorf("an event without the trace id or the path: %v", o)
		}
		if ts, _ := o["ts"].(string); !strings.HasSuffix(ts, "Z") || len(ts) != len("2006-01-02T15:04:05.000000000Z") {
			t.Errorf("ts %q is not RFC 3339 in UTC with nanoseconds", ts)
		}
	}
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(strings.TrimSpace(string(env)), "\n")
	if vars[0] != traceparent {
		t.Errorf("the command got TRACEPARENT=%q", vars[0])
	}
	waiting := firstEvent(t, objs, "waiting")
	holder, _ := waiting["holder"].(map[string]any)
	if waiting["position"] != 2.0 || holder["pid"] != float64(h.Process.Pid) || holder["host"] == "" || waiting["level"] != "info" {
		t.Errorf("waiting: %v, want position 2 behind pid %d", waiting, h.Process.Pid)
	}
	acquired := firstEvent(t, objs, "acquired")
	if acquired["node"] != vars[1] || acquired["session"] != vars[2] || strconv.FormatFloat(acquired["fencing_token"].(float64), 'f', -1, 64) != vars[3] ||
		acquired["reentered"] != false || acquired["wait_ms"].(float64) <= 0 {
		t.Errorf("acquired: %v; the command got node, session, token %v", acquired, vars[1:])
	}
	if started := firstEvent(t, objs, "started"); started["pid"].(float64) <= 0 {
		t.Errorf("started: %v", started)
	}
	if released := firstEvent(t, objs, "released"); released["confirmed"] != true || released["hold_ms"].(float64) < 0 {
		t.Errorf("released: %v", released)
	}
	exit := objs[len(objs)-1]
	if exit["event"] != "exit" || exit["exit_code"] != 0.0 || exit["outcome"] != "success" || exit["level"] != "info" {
		t.Errorf("the last object is not a successful exit: %v", exit)
	}
	assertGone(t, conn, path)
}

// TestEventsBusyAndFailure: tryrun on a busy lock says so in one busy
// event (with the holder) and exits 75 with outcome busy; a command that
// fails is outcome failure with its exit code, and a command killed by a
// signal names it.
func TestEventsBusyAndFailure(t *testing.T) {
	path := lockPath(t)
	h := startHolder(t, path)
	c := zklock(t, "tryrun", "--log-format", "json", "--path", path, "--", "true")
	out, err := c.CombinedOutput()
	if code := zktest.ExitCodeT(t, err); code != 75 {
		t.Fatalf("tryrun exit %d: %s", code, out)
	}
	objs := jsonLines(t, string(out))
	if got := strings.Join(eventNames(objs), " "); got != "busy exit" {
		t.Errorf("events %q, want busy exit", got)
	}
	busy := firstEvent(t, objs, "busy")
	holder, _ := busy["holder"].(map[string]any)
	if holder["pid"] != float64(h.Process.Pid) || !strings.Contains(busy["msg"].(string), "is busy: held by") {
		t.Errorf("busy: %v", busy)
	}
	if exit := objs[len(objs)-1]; exit["outcome"] != "busy" || exit["exit_code"] != 75.0 {
		t.Errorf("exit: %v", exit)
	}

	other := lockPath(t) + "-free"
	for _, tc := range []struct {
		script  string
		code    float64
		outcome string
		signal  any
	}{
		{"exit 3", 3, "failure", nil},
		{"kill -KILL $$", 137, "failure", "SIGKILL"},
	} {
		out, _ := zklock(t, "run", "--log-format", "json", "--path", other, "--", "sh", "-c", tc.script).CombinedOutput()
		objs := jsonLines(t, string(out))
		exit := objs[len(objs)-1]
		if exit["event"] != "exit" || exit["exit_code"] != tc.code || exit["outcome"] != tc.outcome || exit["signal"] != tc.signal {
			t.Errorf("%s: exit event %v", tc.script, exit)
		}
	}
}

// TestEventsLost: a holder cut off from the server reports the loss as it
// happens (cause and how long ago the quorum last heard of it), then how
// the command was stopped, and exits 76 with outcome lost. A holder that
// was frozen while the watchdog stopped its command reports the loss too,
// once it runs again, with the watchdog as its cause.
func TestEventsLost(t *testing.T) {
	start := func(t *testing.T, servers string) (*exec.Cmd, *syncBuffer) {
		dir := t.TempDir()
		c := zklock(t, "run", "--log-format", "json", "--servers", servers, "--session-timeout", "2s", "--path", lockPath(t),
			"--", "sh", "-c", `touch "$1/started"; while :; do sleep 0.05; done`, "sh", dir)
		return c, startUntilStarted(t, c, dir)
	}
	check := func(t *testing.T, c *exec.Cmd, stderr *syncBuffer, causes ...string) {
		if code := zktest.ExitCodeT(t, c.Wait()); code != 76 {
			t.Fatalf("exit %d, want 76: %s", code, stderr.String())
		}
		objs := jsonLines(t, stderr.String())
		lost := firstEvent(t, objs, "lost")
		if lost["level"] != "error" || !slices.Contains(causes, fmt.Sprint(lost["cause"])) || lost["quorum_heard_age_ms"].(float64) < 1000 {
			t.Errorf("lost: %v, want a cause in %v", lost, causes)
		}
		// The guard's report and the watchdog, which enforces the same
		// deadline from outside, race: the supervisor's warning may say
		// either, before or after the event.
		if names := strings.Join(eventNames(objs), " "); !strings.HasPrefix(names, "acquired started") ||
			!strings.HasSuffix(names, "error exit") || strings.Count(names, "lost") != 1 {
			t.Errorf("events %q:\n%s", names, stderr.String())
		}
		if exit := objs[len(objs)-1]; exit["outcome"] != "lost" || exit["exit_code"] != 76.0 || exit["level"] != "error" {
			t.Errorf("exit: %v", exit)
		}
	}
	t.Run("partition", func(t *testing.T) {
		proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
		c, stderr := start(t, proxy.Addr())
		proxy.Blackhole()
		check(t, c, stderr, "no_contact", "watchdog")
	})
	t.Run("frozen", func(t *testing.T) {
		c, stderr := start(t, server(t).ConnectString())
		zktest.Eventually(t, 10*time.Second, "the started event", func() bool { return strings.Contains(stderr.String(), `"event":"started"`) })
		pid := int(firstEvent(t, jsonLines(t, stderr.String()), "started")["pid"].(float64))
		if err := c.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		zktest.Eventually(t, 15*time.Second, "the watchdog to stop the command", func() bool { return !zktest.ProcessAlive(pid) })
		if err := c.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		// The watchdog acted while zklock was stopped: whatever the
		// guard finds once zklock runs again, the cause is the watchdog.
		check(t, c, stderr, "watchdog")
	})
}

// TestWaitingPastALeftoverNode: a persistent child whose name ends in ten
// digits (a lock path of its own, /p/build-0000000000) is no contender, so
// when the holder leaves, a waiter further back that follows the holder
// (--progress) names the next holder, not that node, and its position
// behind it: its waiting events count the queue as the acquisition and
// list do.
func TestWaitingPastALeftoverNode(t *testing.T) {
	path := lockPath(t)
	conn := rawZK(t)
	const leftoverName = "build-0000000000"
	leftover := path + "/" + leftoverName
	createParents(t, conn, leftover)
	if _, err := conn.Create(leftover, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Delete(leftover, -1) })
	dir := t.TempDir()
	holder, holderErr := startGated(t, dir, "h", "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	next, nextErr := startGated(t, dir, "n", "run", "--path", path)
	zktest.Eventually(t, 10*time.Second, "the next to queue", func() bool { return queueLen(conn, path) == 3 })
	last := zklock(t, "run", "--log-format", "json", "--progress", "--path", path, "--", "true")
	lastErr := &syncBuffer{}
	last.Stderr = lastErr
	if err := last.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { last.Process.Kill() })
	zktest.Eventually(t, 10*time.Second, "the last one's waiting event", func() bool {
		return strings.Contains(lastErr.String(), fmt.Sprintf(`"pid":%d`, holder.Process.Pid))
	})

	if err := os.WriteFile(filepath.Join(dir, "h"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantExit(t, holder, holderErr, 0, "the holder")
	zktest.Eventually(t, 10*time.Second, "the next one's command", func() bool { return fileExists(filepath.Join(dir, "n.started")) })
	// Once it holds, the next one stamps its node, so one or two events
	// name it: wait for the first.
	zktest.Eventually(t, 10*time.Second, "a waiting event naming the next holder", func() bool {
		return strings.Contains(lastErr.String(), fmt.Sprintf(`"pid":%d`, next.Process.Pid))
	})
	if err := os.WriteFile(filepath.Join(dir, "n"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantExit(t, next, nextErr, 0, "the next one")
	if code := zktest.ExitCodeT(t, last.Wait()); code != 0 {
		t.Fatalf("the last one: exit %d: %s", code, lastErr)
	}
	named := 0
	for _, o := range jsonLines(t, lastErr.String()) {
		h, _ := o["holder"].(map[string]any)
		if o["event"] != "waiting" || h == nil {
			continue
		}
		if h["node"] == leftoverName {
			t.Errorf("a waiting event names the leftover node as the holder: %v", o)
		}
		if h["pid"] == float64(next.Process.Pid) {
			named++
			if o["position"] != 2.0 {
				t.Errorf("behind the next one: %v; want position 2", o)
			}
		}
	}
	if named == 0 {
		t.Errorf("no waiting event named the next holder, pid %d: %s", next.Process.Pid, lastErr)
	}
}
