package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/lockexec"
)

const testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// jsonUI is a ui writing JSON to a buffer, with a trace in the
// environment.
func jsonUI(stderr *bytes.Buffer) *ui {
	u := newUI(&bytes.Buffer{}, stderr)
	u.formatSet = true
	u.json = newJSONLog(stderr, func(k string) string {
		if k == "TRACEPARENT" {
			return testTraceparent
		}
		return ""
	})
	u.path = "/locks/a"
	return u
}

// sampleEvents has every event with every key it can have, and its
// variants (another client's holder, a re-entry, a revoker without a
// record).
func sampleEvents() []runner.Event {
	at := time.Date(2026, 11, 21, 3, 0, 4, 123456789, time.UTC)
	zk := owner.Owner{Zklock: "1.2.3", Host: "web-3", PID: 81233, User: "deploy", Cmd: []string{"./report.sh", "--full"}, Since: at}
	holder := recipe.Contender{Name: "_c_9f-lock-0000000041", Seq: 41, Flavor: recipe.FlavorCurator}
	acquired := zk
	acquired.Acquired = at.Add(time.Minute)
	foreign := recipe.Contender{Name: "_c_a3-lock-0000000040", Seq: 40, Flavor: recipe.FlavorCurator}
	return []runner.Event{
		runner.WaitStatus{Path: "/locks/a", Node: "/locks/a/_c_b1-lock-0000000042", Position: 2,
			Holder: &runner.Holder{Contender: holder, NodeData: owner.Decode(zk.Encode()), HeldSince: at}},
		runner.WaitStatus{Path: "/locks/a", Node: "/locks/a/_c_b1-lock-0000000042", Position: 3,
			Holder: &runner.Holder{Contender: foreign, NodeData: owner.Decode([]byte("10.0.0.7"))}},
		runner.WaitOver{Waited: time.Minute},
		runner.Acquired{Path: "/locks/a", Node: "/locks/a/_c_b1-lock-0000000042", Session: 0x100002e5a820001, FencingToken: 4711, Wait: 61234 * time.Millisecond},
		runner.Acquired{Path: "/locks/b", Node: "/locks/b/_c_c2-lock-0000000001", Session: 0x100002e5a820000, FencingToken: 17, Reentered: true},
		runner.Acquired{Path: "/pools/staging/env-b", Node: "/pools/staging/env-b/_c_d4-lock-0000000003", Session: 0x100002e5a820001, FencingToken: 4712, Wait: 2 * time.Second, Resource: "env-b"},
		runner.Busy{BusyError: &recipe.BusyError{Path: "/locks/a", Holder: holder, Data: acquired.Encode(), Limit: 3}},
		runner.Busy{BusyError: &recipe.BusyError{Path: "/locks/a", Holder: foreign, Data: []byte("10.0.0.7")}},
		runner.Busy{BusyError: &recipe.BusyError{Path: "/pools/staging/env-a", Holder: holder, Data: acquired.Encode(),
			Pool: &recipe.PoolShortage{Path: "/pools/staging", Take: 1, Size: 2}}},
		runner.Skipped{RecentSuccessError: &runner.RecentSuccessError{
			Last: success.Record{Path: "/locks/a", At: at, NodeData: owner.Decode(zk.Encode())}, Age: 9 * time.Hour, Window: 20 * time.Hour}},
		runner.Skipped{RecentSuccessError: &runner.RecentSuccessError{
			Last: success.Record{Path: "/locks/a", At: at, NodeData: owner.Decode([]byte("cron-7"))}, Age: time.Hour, Window: 20 * time.Hour}},
		runner.Superseded{SupersededError: superseded},
		runner.Outdated{OutdatedError: outdated},
		runner.Started{PID: 4242},
		runner.Lost{Path: "/locks/a", Err: fmt.Errorf("%w: /locks/a/_c_b1-lock-0000000042", recipe.ErrNodeGone), QuorumHeardAge: 1500 * time.Millisecond},
		runner.PossibleOverlap{Path: "/locks/a", OverlapError: &runner.OverlapError{Late: 1234 * time.Millisecond, Timeout: 2 * time.Second,
			Err: &lockexec.TerminatedError{Reason: lockexec.ErrLockLost, Killed: true}}},
		runner.Revoked{RevokedError: &recipe.RevokedError{Path: "/locks/a", Node: "/locks/a/_c_b1-lock-0000000042",
			Revocation: recipe.Revocation{Host: "ops-1", PID: 7, User: "alice", At: at}}},
		runner.Revoked{RevokedError: &recipe.RevokedError{Path: "/locks/a", Node: "/locks/a/_c_b1-lock-0000000042", Revocation: recipe.Revocation{At: at}}},
		runner.Released{Paths: []string{"/locks/a", "/locks/b"}, Hold: 2 * time.Second, Confirmed: true, How: "session closed"},
	}
}

// The samples of a waiter whose place a newer run took, and of a run
// older than one that succeeded: each is an event, and then the outcome
// that ends the run.
var (
	newer      = int64(42)
	superseded = &recipe.SupersededError{Path: "/locks/a", Node: "/locks/a/_c_b1-lock-0000000042",
		By: recipe.Superseder{Host: "ci-2", PID: 991, Node: "_c_e5-lock-0000000043", Key: &newer}}
	outdated = &runner.OutdatedError{Path: "/locks/a", Key: 41,
		Last: success.Record{Path: "/locks/a", At: time.Date(2026, 11, 21, 3, 0, 4, 0, time.UTC),
			NodeData: owner.Decode(owner.Owner{Zklock: "1.2.3", Host: "ci-1", PID: 4210, User: "deploy",
				Cmd: []string{"./deploy.sh"}, OrderKey: &newer}.Encode())}}
)

var tsRe = regexp.MustCompile(`"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z"`)

// TestEventKeys: what --log-format json writes, event by event, is the
// golden file (testdata/events.golden; -update rewrites it), and its keys
// are the documented ones (eventDocs): every key written is documented,
// and every documented key is written by one of the samples. Renaming a
// key fails here; so does adding one without documenting it.
func TestEventKeys(t *testing.T) {
	// Messages show local times: make them one zone's wherever the test
	// runs.
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	var stderr bytes.Buffer
	u := jsonUI(&stderr)
	u.verbose = true
	for _, e := range sampleEvents() {
		u.event(e)
	}
	u.warnf("could not confirm the release of %s", "/locks/a")
	u.logf("connected to %s", "127.0.0.1:2181")
	u.finish(&lockexec.TerminatedError{Reason: lockexec.ErrLockLost, Exit: &lockexec.ExitError{Code: 143, Signal: syscall.SIGTERM}}, 76, "zklock run --help")
	u.finish(&runner.ConflictError{Err: &recipe.BusyError{Path: "/locks/a"}, Code: 75}, 75, "zklock run --help")
	u.finish(&runner.ConflictError{Err: superseded, Code: 75}, 75, "zklock run --help")
	u.finish(&runner.ConflictError{Err: outdated, Code: 75}, 75, "zklock run --help")
	u.finish(nil, 0, "zklock run --help")

	got := tsRe.ReplaceAllString(stderr.String(), `"ts":"TS"`)
	golden := "testdata/events.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("events differ from %s (go test ./cmd -run TestEventKeys -update):\n%s", golden, got)
	}
	if n := len(tsRe.FindAllString(stderr.String(), -1)); n != strings.Count(got, "\n") {
		t.Errorf("%d of %d lines have a ts in UTC with nanoseconds", n, strings.Count(got, "\n"))
	}

	documented := map[string][]string{}
	for _, d := range eventDocs {
		documented[d.name] = append(slices.Clone(commonKeys), d.keys...)
	}
	seen := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("not a JSON object: %s: %v", line, err)
		}
		ev, _ := obj["event"].(string)
		if seen[ev] == nil {
			seen[ev] = map[string]bool{}
		}
		for _, k := range flatKeys("", obj) {
			seen[ev][k] = true
			if !slices.Contains(documented[ev], k) {
				t.Errorf("event %q has the key %q, which eventDocs does not list", ev, k)
			}
		}
	}
	for ev, want := range documented {
		for _, k := range want {
			if !seen[ev][k] {
				t.Errorf("event %q: no sample writes the documented key %q", ev, k)
			}
		}
	}
}

// flatKeys lists an object's keys, an inner object's as "outer.inner".
func flatKeys(prefix string, obj map[string]any) []string {
	var out []string
	for k, v := range obj {
		if inner, ok := v.(map[string]any); ok {
			out = append(out, flatKeys(prefix+k+".", inner)...)
			continue
		}
		out = append(out, prefix+k)
	}
	sort.Strings(out)
	return out
}

// TestTraceID: a W3C traceparent gives its trace id; anything else is
// ignored.
func TestTraceID(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{testTraceparent, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", "4bf92f3577b34da6a3ce929d0e0e4736"}, // a later version may add fields
		{"", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", ""}, // version 00 has exactly four fields
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},   // version ff is invalid
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},   // all-zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},   // all-zero parent id
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", ""},   // upper case
		{"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", ""},   // misplaced dash
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", ""},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", ""},
	} {
		got, ok := traceID(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("traceID(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// TestJSONOnlyOnStderr: under --log-format json (the flag, wherever it is
// among zklock's arguments, the environment, or the configuration file),
// every line zklock writes on stderr is a JSON object, also for the
// errors found before the settings are read, and the last is the exit
// event with the exit code. None of these needs a server.
func TestJSONOnlyOnStderr(t *testing.T) {
	dir := t.TempDir()
	cfg := dir + "/config.toml"
	if err := os.WriteFile(cfg, []byte("log_format = \"json\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := dir + "/empty.toml"
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := dir + "/bad.toml"
	if err := os.WriteFile(bad, []byte("log_format = \"json\"\nnot_a_key = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		msg  string // in the error event
	}{
		{"unknown flag", nil, []string{"run", "--bogus", "--log-format", "json"}, 64, "unknown flag: --bogus"},
		{"unknown command", nil, []string{"--log-format=json", "bogus"}, 64, `unknown command \"bogus\"`},
		{"missing --path", nil, []string{"run", "--log-format", "json", "--", "true"}, 64, "--path is required"},
		{"missing --", nil, []string{"tryrun", "--log-format", "json", "--path", "/a", "true"}, 64, "missing -- before the command"},
		{"bad path", []string{envLogFormat + "=json"}, []string{"holders", "--path", "relative"}, 64, "is relative"},
		{"help topic", []string{envLogFormat + "=json"}, []string{"help", "bogus"}, 64, "unknown help topic"},
		{"from the file", []string{envConfig + "=" + cfg}, []string{"run", "--bogus"}, 64, "unknown flag: --bogus"},
		{"the file itself is bad", []string{envConfig + "=" + bad}, []string{"run", "--path", "/a", "--", "true"}, 64, "not_a_key"},
		{"command not found", []string{envLogFormat + "=json"}, []string{"run", "--path", "/a", "--", "no-such-command-here"}, 127, "no-such-command-here"},
		{"flag wins over the environment", []string{envLogFormat + "=text"}, []string{"run", "--log-format", "json", "--path", "/a", "--bad"}, 64, "unknown flag: --bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range append([]string{envConfig + "=" + empty, envLogFormat + "="}, tc.env...) {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			for _, l := range lines {
				if !json.Valid([]byte(l)) || !strings.HasPrefix(l, "{") {
					t.Errorf("not a JSON object on stderr: %q", l)
				}
			}
			if !strings.Contains(stderr.String(), tc.msg) || !strings.Contains(lines[0], `"level":"error","msg":`) {
				t.Errorf("no error event saying %q: %s", tc.msg, stderr.String())
			}
			last := lines[len(lines)-1]
			if !strings.Contains(last, `"event":"exit"`) || !strings.Contains(last, fmt.Sprintf(`"exit_code":%d`, tc.code)) {
				t.Errorf("the last line is not the exit event with %d: %s", tc.code, last)
			}
		})
	}
	// Text stays text, and a bad format is said in text.
	t.Setenv(envConfig, empty)
	t.Setenv(envLogFormat, "")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "--log-format", "yaml", "--path", "/a", "--", "true"}, &stdout, &stderr); code != 64 ||
		!strings.HasPrefix(stderr.String(), `zklock: invalid argument "yaml" for "--log-format" flag: must be text or json, not "yaml"`) {
		t.Errorf("--log-format yaml: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	t.Setenv(envLogFormat, "yaml")
	if code := run(context.Background(), []string{"holders", "--path", "/a"}, &stdout, &stderr); code != 64 ||
		!strings.HasPrefix(stderr.String(), `zklock: ZKLOCK_LOG_FORMAT: must be text or json, not "yaml"`) {
		t.Errorf("ZKLOCK_LOG_FORMAT=yaml: exit %d, %q", code, stderr.String())
	}
}

// TestOutcome: each way a run ends has its outcome and signal.
func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err     error
		outcome string
		signal  syscall.Signal
	}{
		{nil, "success", 0},
		{&lockexec.ExitError{Code: 3}, "failure", 0},
		{&lockexec.ExitError{Code: 137, Signal: syscall.SIGKILL}, "failure", syscall.SIGKILL},
		{&lockexec.TerminatedError{Reason: lockexec.ErrMaxRuntime, Exit: &lockexec.ExitError{Code: 143, Signal: syscall.SIGTERM}}, "failure", syscall.SIGTERM},
		{&runner.ConflictError{Err: &recipe.BusyError{Path: "/a"}, Code: 75}, "busy", 0},
		{&runner.ConflictError{Err: &runner.RecentSuccessError{}, Code: 75}, "skipped", 0},
		{&runner.ConflictError{Err: &runner.WaitTimeoutError{}, Code: 75}, "timeout", 0},
		{&lockexec.TerminatedError{Reason: lockexec.ErrLockLost}, "lost", 0},
		{&lockexec.TerminatedError{Reason: lockexec.ErrLockRevoked}, "revoked", 0},
		{&recipe.RevokedError{Path: "/a"}, "revoked", 0},
		{&runner.SignalError{Signal: syscall.SIGTERM}, "interrupted", syscall.SIGTERM},
		{&lockexec.StartError{Name: "x", Code: 127, Err: errors.New("not found")}, "error", 0},
		{usageErrorf("bad"), "error", 0},
	} {
		if got := outcomeOf(tc.err); got != tc.outcome {
			t.Errorf("outcomeOf(%v) = %s, want %s", tc.err, got, tc.outcome)
		}
		if got := signalOf(tc.err); got != tc.signal {
			t.Errorf("signalOf(%v) = %v, want %v", tc.err, got, tc.signal)
		}
	}
}
