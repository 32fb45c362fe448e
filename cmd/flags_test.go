package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/waitlimit"
)

// validated parses run's flags and validates them into runner options.
func validated(t *testing.T, args ...string) (runner.Options, error) {
	t.Helper()
	var ro runner.Options
	o, err := parseRun(t, newCmdRun, args...)
	if err != nil {
		return ro, err
	}
	return o.validate(newUI(&bytes.Buffer{}, &bytes.Buffer{}))
}

// TestRunFlagMeanings: each flag value means what it says, compared field
// by field against what the runner is handed.
func TestRunFlagMeanings(t *testing.T) {
	type want struct {
		KillGrace time.Duration
		Mode      recipe.Mode
		Wait      waitlimit.Limit
		OncePer   time.Duration
	}
	grace := 5 * time.Second
	for _, tc := range []struct {
		args []string
		want want
	}{
		{[]string{"--kill-grace", "0"}, want{KillGrace: 0}},
		{[]string{"--kill-grace", "250ms"}, want{KillGrace: 250 * time.Millisecond}},
		{nil, want{KillGrace: grace}},
		{[]string{"--limit", "1"}, want{KillGrace: grace, Mode: recipe.ModeLimit(1)}},
		{[]string{"--limit", "2147483647"}, want{KillGrace: grace, Mode: recipe.ModeLimit(2147483647)}},
		{[]string{"--limit", "2", "--flavor", "curator"}, want{KillGrace: grace, Mode: recipe.ModeLimit(2)}},
		{[]string{"--shared"}, want{KillGrace: grace, Mode: recipe.ModeShared}},
		{[]string{"--timeout", "5ms"}, want{KillGrace: grace, Wait: waitlimit.AtMost(5 * time.Millisecond)}},
		{[]string{"--timeout", "0"}, want{KillGrace: grace, Wait: waitlimit.None}},
		{[]string{"--once-per", "20h"}, want{KillGrace: grace, OncePer: 20 * time.Hour}},
	} {
		ro, err := validated(t, append(append([]string{"--path", "/a"}, tc.args...), "--", "true")...)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		got := want{KillGrace: ro.KillGrace, Mode: ro.Mode, Wait: ro.Wait, OncePer: ro.OncePer}
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// TestRunFlagRefusals: values that cannot mean anything fail with a usage
// error that names the flag.
func TestRunFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--limit", "0"}, `invalid argument "0" for "--limit" flag: must be at least 1, not 0`},
		{[]string{"--limit", "-2"}, `invalid argument "-2" for "--limit" flag: must be at least 1, not -2`},
		{[]string{"--limit", "x"}, `invalid argument "x" for "--limit" flag: "x" is not a number`},
		{[]string{"--limit", "2147483648"}, `invalid argument "2147483648" for "--limit" flag: must be at most 2147483647, not 2147483648`},
		{[]string{"--limit", "99999999999999999999"}, `invalid argument "99999999999999999999" for "--limit" flag: must be at most 2147483647, not 99999999999999999999`},
		{[]string{"--limit", "-99999999999999999999"}, `for "--limit" flag: must be at least 1, not -99999999999999999999`},
		{[]string{"--limit", "2", "--flavor", "curator-rw"}, "--limit uses Curator's semaphore layout, which has no read-write naming; drop --flavor curator-rw"},
		{[]string{"--limit", "2", "--flavor", "kazoo"}, "--limit uses Curator's semaphore layout, which Kazoo's Semaphore cannot see; drop --flavor kazoo"},
		{[]string{"-E", "x"}, `invalid argument "x" for "-E, --conflict-exit-code" flag: "x" is not a number`},
		{[]string{"-E", "256"}, `invalid argument "256" for "-E, --conflict-exit-code" flag: must be between 0 and 255, not 256`},
		{[]string{"--conflict-exit-code", "-1"}, `invalid argument "-1" for "-E, --conflict-exit-code" flag: must be between 0 and 255, not -1`},
		{[]string{"--kill-grace", "-1s"}, `invalid argument "-1s" for "--kill-grace" flag: must not be negative, not -1s`},
		{[]string{"--max-runtime", "-1m"}, `invalid argument "-1m" for "--max-runtime" flag: must not be negative, not -1m0s`},
		{[]string{"--flavor", "etcd"}, `invalid argument "etcd" for "--flavor" flag: must be curator, curator-rw or kazoo, not "etcd"`},
		{[]string{"--on-lost", "x"}, `invalid argument "x" for "--on-lost" flag: must be terminate or ignore, not "x"`},
		{[]string{"--on-revoke", "x"}, `invalid argument "x" for "--on-revoke" flag: must be terminate or ignore, not "x"`},
		{[]string{"--timeout", "-1s"}, `invalid argument "-1s" for "--timeout" flag: must not be negative, not -1s`},
		{[]string{"--timeout", "x"}, `invalid argument "x" for "--timeout" flag: "x" is not a duration (e.g. 500ms, 30s, 5m, 1h30m)`},
		{[]string{"--timeout", "5"}, `invalid argument "5" for "--timeout" flag: "5" has no unit: write 5s for seconds (units: ms, s, m, h; e.g. 500ms, 30s, 5m, 1h30m)`},
		{[]string{"--max-runtime", "90"}, `invalid argument "90" for "--max-runtime" flag: "90" has no unit: write 90s for seconds`},
		{[]string{"--once-per", "0"}, `invalid argument "0" for "--once-per" flag: must be positive, not 0s`},
		{[]string{"--once-per", "-1h"}, `invalid argument "-1h" for "--once-per" flag: must be positive, not -1h0m0s`},
		{[]string{"--once-per", "1h", "--shared"}, "--once-per needs an exclusive lock: holders of a shared lock or a semaphore run together, so each would run; drop --shared and --limit"},
		{[]string{"--once-per", "1h", "--limit", "2"}, "--once-per needs an exclusive lock: holders of a shared lock or a semaphore run together, so each would run; drop --shared and --limit"},
		{[]string{"--timeout", "99999999999h"}, `invalid argument "99999999999h" for "--timeout" flag: "99999999999h" is too long: at most 2562047h47m16.854775807s`},
		{[]string{"--once-per", "daily"}, `invalid argument "daily" for "--once-per" flag: "daily" is not a duration (e.g. 500ms, 30s, 5m, 1h30m)`},
		{[]string{"--path", "/a/\U0001F512"}, `bad path: "/a/🔒" contains the character U+1F512, which ZooKeeper does not allow in a path`},
		{[]string{"--path", "/a/\uFFFE"}, "contains the character U+FFFE"},
	} {
		_, err := validated(t, append(append([]string{"--path", "/a"}, tc.args...), "--", "true")...)
		if tc.args[0] == "--path" {
			_, err = validated(t, append(tc.args, "--", "true")...)
		}
		if code := exitCode(err); code != ExitUsage {
			t.Errorf("%q: exit %d (%v), want %d", tc.args, code, err, ExitUsage)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: %q, want it to contain %q", tc.args, err, tc.msg)
		}
	}
}

// TestSessionTimeoutRange: the connect request carries the session timeout
// as 32-bit milliseconds; outside that it is refused as it is parsed,
// inside it is passed on for the server to clamp.
func TestSessionTimeoutRange(t *testing.T) {
	u := newUI(&bytes.Buffer{}, &bytes.Buffer{})
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"1ns", false},
		{"999us", false},
		{"0s", false},
		{"-1s", false},
		{"1ms", true},
		{maxSessionTimeout.String(), true},
		{(maxSessionTimeout + time.Millisecond).String(), false},
		{"10000h", false},
	} {
		var d time.Duration
		err := (*sessionTimeoutValue)(&d).Set(tc.s)
		if (err == nil) != tc.ok {
			t.Errorf("--session-timeout %s: %v, want accepted %v", tc.s, err, tc.ok)
			continue
		}
		if err != nil {
			continue
		}
		g := &globalOptions{Servers: "zk1", SessionTimeout: d, ConnectTimeout: time.Second}
		if o, err := g.connOptions(u); err != nil || o.SessionTimeout != d {
			t.Errorf("--session-timeout %s passed on as %s (%v)", tc.s, o.SessionTimeout, err)
		}
	}
}

// TestLimitFlavorRefused: --limit with a flavor it cannot honour stops
// before connecting, with one zklock: line and exit 64; the hint names
// where the flavor came from, since a file's flavor has no flag to drop.
func TestLimitFlavorRefused(t *testing.T) {
	userPath, _ := configEnv(t, "flavor = \"curator-rw\"\n", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--flavor", "curator-rw", "--limit", "2"}, "zklock: --limit uses Curator's semaphore layout, which has no read-write naming; drop --flavor curator-rw (see zklock run --help)"},
		{[]string{"--limit", "2"}, "zklock: --limit uses Curator's semaphore layout, which has no read-write naming; the flavor curator-rw comes from " + userPath + ":1: give --flavor curator (see zklock run --help)"},
		{[]string{"--limit", "4294967297"}, `zklock: invalid argument "4294967297" for "--limit" flag: must be at most 2147483647, not 4294967297`},
	} {
		var stderr bytes.Buffer
		args := append([]string{"--servers", "127.0.0.1:1", "--connect-timeout", "1s", "run", "--path", "/a"}, tc.args...)
		code := run(context.Background(), append(args, "--", "true"), &bytes.Buffer{}, &stderr)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if code != ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line starting %q", tc.args, code, stderr.String(), ExitUsage, tc.want)
		}
	}
	// --flavor curator on the command line overrides the file's.
	if _, err := validated(t, "--path", "/a", "--limit", "2", "--flavor", "curator", "--", "true"); err != nil {
		t.Errorf("--flavor curator over a file's curator-rw: %v", err)
	}
}
