package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHabits: a mistyped command is named as such, even with run's flags
// after it; flock(1)'s options get a hint; --version prints the version.
// None of these connects (no server runs here).
func TestHabits(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // the one line on stderr, or stdout for exit 0
	}{
		{[]string{"rnu", "--path", "/x", "--", "true"}, 64, `zklock: unknown command "rnu"; did you mean run? (see zklock --help)`},
		{[]string{"--servers", "zk1:2181", "-v", "tryrn", "--path", "/x"}, 64, `unknown command "tryrn"; did you mean tryrun?`},
		{[]string{"frobnicate"}, 64, `zklock: unknown command "frobnicate" (see zklock --help)`},
		{[]string{"run", "-n", "--path", "/a", "--", "true"}, 64, "flock -n is zklock tryrun"},
		{[]string{"run", "--nonblock", "--path", "/a", "--", "true"}, 64, "flock -n is zklock tryrun"},
		{[]string{"run", "-w", "5", "--path", "/a", "--", "true"}, 64, "flock -w N is --timeout Ns"},
		{[]string{"run", "-s", "--path", "/a", "--", "true"}, 64, "flock -s is --shared"},
		{[]string{"run", "-x", "--path", "/a", "--", "true"}, 64, "flock -x is the default"},
		{[]string{"run", "--path", "/a", "-c", "echo hi"}, 64, "flock -c CMD is -- sh -c CMD"},
		{[]string{"tryrun", "-o", "--path", "/a", "--", "true"}, 64, "use --max-runtime"},
		{[]string{"run", "--timeout", "5", "--path", "/a", "--", "true"}, 64, `"5" has no unit: write 5s for seconds`},
		{[]string{"--session-timeout", "10", "list"}, 64, `"10" has no unit`},
		{[]string{"run", "-q", "--path", "/a", "--", "true"}, 64, "zklock: unknown shorthand flag: 'q' in -q (see zklock run --help)"},
		// tryrun never waits; a flag of another command says whose it is.
		{[]string{"tryrun", "--timeout", "1s", "--path", "/a", "--", "true"}, 64,
			"zklock: unknown flag: --timeout; tryrun never waits: to wait at most D, use zklock run --timeout D (see zklock tryrun --help)"},
		{[]string{"tryrun", "-w", "5", "--path", "/a", "--", "true"}, 64, "tryrun never waits"},
		{[]string{"list", "--once-per", "1h"}, 64, "zklock: unknown flag: --once-per; it is a flag of zklock run and zklock tryrun (see zklock list --help)"},
		{[]string{"run", "--shared=yes", "--path", "/a", "--", "true"}, 64,
			`zklock: invalid argument "yes" for "--shared" flag: not a boolean: write true or false (or 1, 0) (see zklock run --help)`},
		// A command after --, and a command's flag before the command.
		{[]string{"--", "run", "--path", "/a", "--", "true"}, 64,
			`zklock: "run" after -- is not read as a command: give it first (zklock run … -- CMD) (see zklock --help)`},
		{[]string{"--path", "/a", "run", "--", "true"}, 64, "zklock: --path goes after the command: zklock run --path … (see zklock --help)"},
		{[]string{"-v", "--limit", "2", "tryrun", "--path", "/a", "--", "true"}, 64, "zklock: --limit goes after the command: zklock tryrun --limit …"},
		{[]string{"revoke", "--path", "/a", "--json"}, 64, "unknown flag: --json; it is a flag of zklock holders and zklock list"},
		{[]string{"--version"}, 0, "zklock " + Version() + " ("},
		{[]string{"version"}, 0, "zklock " + Version() + " ("},
	} {
		configEnv(t, "", "")
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		got := errb.String()
		if tc.code == 0 {
			got = out.String()
		}
		if code != tc.code || !strings.Contains(got, tc.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit %d and one line with %q", tc.args, code, got, tc.code, tc.want)
		}
	}
}
