package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/inspect"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

func TestExitCode(t *testing.T) {
	cases := []struct {
		err  error
		code int
		msg  string // "" means no message at all
	}{
		{nil, 0, ""},
		{&lockexec.ExitError{Code: 3}, 3, ""},
		{&lockexec.ExitError{Code: 130, Signal: syscall.SIGINT}, 130, ""},
		{&lockexec.StartError{Name: "x", Code: 127, Err: errors.New("not found")}, 127, "x"},
		{&lockexec.StartError{Name: "x", Code: 126, Err: errors.New("permission denied")}, 126, "x"},
		{usageErrorf("bad"), 64, "bad (see zklock --help)"},
		{fmt.Errorf("x: %w", zkconn.ErrBadPath), 64, "x: bad path"},
		{fmt.Errorf("%w: x", zkconn.ErrEphemeralParent), 64, "ephemeral"},
		{&runner.ConflictError{Err: errors.New("busy"), Code: 75}, 75, "busy"},
		{&runner.ConflictError{Err: errors.New("busy"), Code: 0}, 0, "busy"},
		{&runner.SignalError{Signal: syscall.SIGTERM}, 143, "interrupted by SIGTERM"},
		{fmt.Errorf("%w: x", zkconn.ErrUnavailable), 69, "check --servers"},
		{&runner.UnkeptSessionError{Sessions: 3, Timeout: 4 * time.Second, Safe: 9200 * time.Millisecond, Last: zkconn.ErrSessionLost}, 69, "try --session-timeout 9.2s or more"},
		{fmt.Errorf("%w: x; last failure: %w", zkconn.ErrUnavailable, &zkconn.TLSError{Address: "zk1:2281", Problem: zkconn.TLSUntrusted, Err: errors.New("x509: unknown authority")}),
			69, "TLS handshake with zk1:2281 failed: x509: unknown authority (check --tls-ca: "},
		{fmt.Errorf("%w: x; last failure: %w", zkconn.ErrUnavailable, &zkconn.TLSError{Address: "zk1:2281", Problem: zkconn.TLSClientRefused, Err: errors.New("remote error")}),
			69, "(check --tls-cert and --tls-key: "},
		{fmt.Errorf("%w: %w", zkconn.ErrPermission, zk.ErrNoAuth), 77, "check --auth"},
		{zk.ErrNoAuth, 77, "check --auth"},
		{&zkconn.OpError{Op: zkconn.OpCreate, Path: "/a/n", Err: errors.New("unknown error: -124")}, 77, "requires authentication"},
		{&zkconn.OpError{Op: zkconn.OpCreate, Path: "/a/n", Err: errors.New("unknown error: -127")}, 69, "throttles"},
		{&zkconn.OpError{Op: zkconn.OpRead, Path: "/a", Err: zk.ErrSessionExpired}, 69, "session expired"},
		{fmt.Errorf("%w: x", zkconn.ErrSessionLost), 69, "session lost"},
		{fmt.Errorf("%w: %w", lockexec.ErrLockLost, &lockexec.ExitError{Code: 143}), 76, "lock lost"},
		{fmt.Errorf("%w", lockexec.ErrMaxRuntime), 124, "max-runtime"},
		{errors.New("something else"), 69, "something else"},
		{asConflict(fmt.Errorf("%w at /p (5 times)", success.ErrChurn), ExitBusy), 75, "the success record kept being rewritten at /p"},
		{asConflict(fmt.Errorf("%w at /p", recipe.ErrHandoffChurn), 9), 9, "the lock kept changing hands at /p"},
		{asConflict(&inspect.NotRevocableError{Path: "/p", Holders: []recipe.Entry{{}}}, 9), 9, "Kazoo's locks have no revocation"},
		{&zkconn.OpError{Op: zkconn.OpDelete, Path: "/p/" + success.NodeName, Err: zk.ErrNoAuth}, 77,
			"permission denied: cannot delete /p/zklock.last-success: the ACL of /p does not let this client delete nodes in it (check --auth"},
		{&recipe.KindConflictError{Path: "/p", Want: recipe.RecipeLock, Found: recipe.RecipeSemaphore, Node: "/p/leases/x", Limit: 3}, 64,
			"/p is used as a semaphore (node /p/leases/x), not as a lock (use --limit 3 to join it, or another --path)"},
		{&recipe.KindConflictError{Path: "/p", Want: recipe.RecipeLock, Found: recipe.RecipeSemaphore, Node: "/p/locks/x"}, 64,
			"(use --limit N to join it"},
		{&recipe.KindConflictError{Path: "/p", Want: recipe.RecipeSemaphore, Found: recipe.RecipeLock, Node: "/p/x"}, 64,
			"/p is used as a lock (node /p/x), not as a semaphore (drop --limit to join it, or use another --path)"},
		{&recipe.NodeGoneError{Path: "/p", Node: "/p/x"}, 69, "/p lost its place"},
		{&lockexec.TerminatedError{Reason: lockexec.ErrLockRevoked, Cause: &recipe.RevokedError{Path: "/p", Node: "/p/x",
			Revocation: recipe.Revocation{Host: "ops1", PID: 7, User: "ann", At: time.Unix(0, 0)}}, Exit: &lockexec.ExitError{Code: 143}},
			76, "lock revoked while the command ran: /p revoked by ann@ops1 pid 7 at "},
		{&recipe.RevokedError{Path: "/p", Node: "/p/x", Revocation: recipe.Revocation{At: time.Unix(0, 0)}},
			76, "/p revoked by a client that left no record (a Curator Revoker?) at 1970-01-01T"},
		{&recipe.RevokedError{Path: "/p", Node: "/p/x", Revocation: recipe.Revocation{At: time.Unix(0, 0)}},
			76, "; left the queue without running the command"},
		{asConflict(&inspect.RevokeTimeoutError{Path: "/p", After: time.Second}, 75),
			75, "/p was not released within 1s of the revocation"},
		{&runner.ConflictError{Err: &runner.RecentSuccessError{Last: success.Record{Path: "/p"}, Window: time.Hour}, Code: 75}, 75, ""},
		{&runner.ConflictError{Err: &runner.RecentSuccessError{Last: success.Record{Path: "/p"}, Window: time.Hour}, Code: 0}, 0, ""},
		{&runner.UpgradeError{Path: "/p", PID: 7}, 64, "/p is held shared by zklock pid 7, an ancestor of this one"},
		{&runner.OnceHeldError{Path: "/p", PID: 7}, 64, "(give --once-per to the outer zklock)"},
	}
	for _, c := range cases {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.code)
		}
		msg := message(c.err, "zklock --help")
		if (c.msg == "") != (msg == "") || !strings.Contains(msg, c.msg) {
			t.Errorf("message(%v) = %q, want it to contain %q", c.err, msg, c.msg)
		}
	}
}

// TestMainOutput checks the whole path from arguments to stderr and exit
// code for errors that need no server.
func TestMainOutput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"run", "--path", "x", "--", "true"}, 64, "zklock: bad path: \"x\" is relative; lock paths start with / (see zklock run --help)\n"},
		{[]string{"nope"}, 64, "zklock: unknown command \"nope\" (see zklock --help)\n"},
		{[]string{"--tls=false", "--tls-ca", "/x", "run", "--path", "/a", "--", "true"}, 64,
			"zklock: tls is false (flag --tls), but tls_ca turns TLS on: drop one of them (see zklock run --help)\n"},
		{[]string{"version", "extra"}, 64, "zklock: unexpected argument \"extra\" (see zklock version --help)\n"},
		{[]string{"run", "--path", "/a", "--timeout", "soon", "--", "true"}, 64, ""},
		{[]string{"version"}, 0, ""},
		{[]string{"revoke"}, 64, "zklock: --path is required (see zklock revoke --help)\n"},
		// list's --path is optional (it defaults to /): an empty one is a
		// bad path, not a missing flag.
		{[]string{"list", "--path", ""}, 64, "zklock: bad path: empty (see zklock list --help)\n"},
		{[]string{"holders", "--path", ""}, 64, "zklock: --path is required (see zklock holders --help)\n"},
		{[]string{"revoke", "--path", "/a", "--timeout", "-1s"}, 64, ""},
		{[]string{"revoke", "--path", "/a", "-E", "300"}, 64, "zklock: invalid argument \"300\" for \"-E, --conflict-exit-code\" flag: must be between 0 and 255, not 300 (see zklock revoke --help)\n"},
		{[]string{"run", "--path", "/a", "--on-revoke", "later", "--", "true"}, 64, ""},
		{[]string{"forget"}, 64, "zklock: --path is required (see zklock forget --help)\n"},
		{[]string{"forget", "--path", "/a", "--path", "a"}, 64, "zklock: bad path: \"a\" is relative; lock paths start with / (see zklock forget --help)\n"},
		{[]string{"forget", "--path", "/a", "extra"}, 64, "zklock: unexpected argument \"extra\" (see zklock forget --help)\n"},
		{[]string{"forget", "--path", "/a", "--path", "/a"}, 64, "zklock: --path /a is given twice (see zklock forget --help)\n"},
		// help with a topic that names no command says so, as an unknown
		// command does, instead of printing zklock --help and exiting 0.
		{[]string{"help", "nosuch"}, 64, "zklock: unknown help topic \"nosuch\" (see zklock --help)\n"},
		{[]string{"--servers", "help", "help", "nosuch"}, 64, "zklock: unknown help topic \"nosuch\" (see zklock --help)\n"},
		{[]string{"help", "rnu"}, 64, "zklock: unknown help topic \"rnu\"; did you mean run? (see zklock --help)\n"},
		// The success record of a lock path is no lock path itself.
		{[]string{"run", "--path", "/a/zklock.last-success", "--", "true"}, 64, "zklock: bad path: \"/a/zklock.last-success\" has a component zklock.last-success, the name of a lock path's success record (see zklock run --help)\n"},
		{[]string{"tryrun", "--path", "/a/zklock.last-success/b", "--", "true"}, 64, "zklock: bad path: \"/a/zklock.last-success/b\" has a component zklock.last-success, the name of a lock path's success record (see zklock tryrun --help)\n"},
		{[]string{"forget", "--path", "/a/zklock.last-success"}, 64, "zklock: bad path: \"/a/zklock.last-success\" has a component zklock.last-success, the name of a lock path's success record (see zklock forget --help)\n"},
		// An overlong value is cut short in the message, wherever it is quoted.
		{[]string{"revoke", "--path", "/a", "--node", strings.Repeat("n", 100000)}, 64, "zklock: bad node: " + strings.Repeat("n", 320) +
			"…[99560 bytes cut]…" + strings.Repeat("n", 120) + " is not a contender's name: those end in a 10-digit sequence number, as list shows them (see zklock revoke --help)\n"},
		{[]string{"run", "--path", "/a", "--timeout", strings.Repeat("9", 100000) + "h", "--", "true"}, 64, ""},
		{[]string{"run", "--path", "/a", "--" + strings.Repeat("x", 100000), "--", "true"}, 64, ""},
		// So is a value of many short words: each is short, the whole is not.
		{[]string{"revoke", "--path", "/a", "--node", strings.Repeat("ab ", 40000)}, 64, ""},
		{[]string{"run", "--path", "/a", "--timeout", strings.Repeat("1h ", 40000), "--", "true"}, 64, ""},
		{[]string{"run", "--path", "a " + strings.Repeat("b ", 40000), "--", "true"}, 64, ""},
		{[]string{"run", "--path", "/a", "--on-lost", strings.Repeat("x ", 40000), "--", "true"}, 64, ""},
		{[]string{"--" + strings.Repeat("x ", 40000)}, 64, ""},
		{[]string{strings.Repeat("x ", 40000)}, 64, ""},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errb.String())
		}
		if tc.err != "" && errb.String() != tc.err {
			t.Errorf("%q: stderr %q, want %q", tc.args, errb.String(), tc.err)
		}
		if errb.Len() > 2000 {
			t.Errorf("%.40q…: %d bytes on stderr", tc.args, errb.Len())
		}
		if strings.Count(errb.String(), "\n") > 1 {
			t.Errorf("%q: more than one line on stderr: %q", tc.args, errb.String())
		}
	}
}

// TestBadKrb5ConfExit: a krb5.conf that cannot be parsed is a mistake in a
// configuration file (64), said in one line that names the file and the
// line, and not a failure to reach ZooKeeper or a KDC (69).
func TestBadKrb5ConfExit(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "krb5.conf")
	if err := os.WriteFile(conf, []byte("[libdefaults]\n default_realm = EX.COM\n garbage here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", conf)
	t.Setenv("ZKLOCK_CONFIG", "")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--servers", "127.0.0.1:1", "--sasl", "gssapi", "run", "--path", "/a", "--", "true"}, &out, &errb)
	want := "zklock: Kerberos configuration " + conf + ", line 3 is invalid: libdefaults section line (garbage here)\n"
	if code != ExitUsage || errb.String() != want {
		t.Errorf("exit %d, stderr %q\nwant exit %d, stderr %q", code, errb.String(), ExitUsage, want)
	}
}

// TestUnreadSASLSettings: a SASL setting that the login in use would not
// read is refused (64) in one line, before any connection: it would
// otherwise pass in silence and the session log in another way.
func TestUnreadSASLSettings(t *testing.T) {
	t.Setenv("ZKLOCK_CONFIG", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keytab", "/k"}, "zklock: --keytab is a setting of a SASL login: give --sasl (digest or gssapi) too, or drop it (see zklock run --help)\n"},
		{[]string{"--sasl-principal", "u"}, "zklock: --sasl-principal is a setting of a SASL login: give --sasl (digest or gssapi) too, or drop it (see zklock run --help)\n"},
		{[]string{"--sasl-password-file", "/p"}, "zklock: --sasl-password-file is a setting of a SASL login: give --sasl (digest or gssapi) too, or drop it (see zklock run --help)\n"},
		{[]string{"--sasl", "digest", "--sasl-principal", "u", "--keytab", "/k"}, "zklock: --keytab is for --sasl gssapi, not digest (see zklock run --help)\n"},
		{[]string{"--sasl", "gssapi", "--sasl-password-file", "/p"}, "zklock: --sasl-password-file is for --sasl digest, not gssapi (see zklock run --help)\n"},
	} {
		var out, errb bytes.Buffer
		args := append(append([]string{"--servers", "127.0.0.1:1"}, tc.args...), "run", "--path", "/a", "--", "true")
		if code := run(context.Background(), args, &out, &errb); code != ExitUsage || errb.String() != tc.want {
			t.Errorf("%v: exit %d, stderr %q\nwant exit %d, stderr %q", tc.args, code, errb.String(), ExitUsage, tc.want)
		}
	}
}

// TestSASLSettingsKeptInAFile: a configuration file may keep a login's
// settings for the runs that ask for one; a run that does not is not
// refused for them.
func TestSASLSettingsKeptInAFile(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(conf, []byte("keytab = \"/k\"\nsasl_principal = \"u\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZKLOCK_CONFIG", conf)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--servers", "127.0.0.1:1", "--connect-timeout", "200ms", "run", "--path", "/a", "--", "true"}, &out, &errb)
	if code != ExitUnavailable {
		t.Errorf("exit %d, stderr %q; want %d (no server), not a refusal of the file's settings", code, errb.String(), ExitUnavailable)
	}
}
