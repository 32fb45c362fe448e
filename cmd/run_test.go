package cmd

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// testGlobal are the connection flags the parsing tests start from.
func testGlobal() *globalOptions {
	return &globalOptions{Servers: "127.0.0.1:2181", SessionTimeout: time.Second, ConnectTimeout: time.Second}
}

// parseRun runs a run or tryrun command's parsing and validation only;
// newCmd is newCmdRun or newCmdTryrun.
func parseRun(t *testing.T, newCmd func(*globalOptions, *ui, func(context.Context, *runOptions) error) *cobra.Command,
	args ...string) (*runOptions, error) {
	t.Helper()
	var got *runOptions
	u := newUI(&bytes.Buffer{}, &bytes.Buffer{})
	c := newCmd(testGlobal(), u, func(_ context.Context, o *runOptions) error {
		got = o
		_, err := o.validate(u)
		return err
	})
	c.SetArgs(args)
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	err := c.Execute()
	return got, err
}

// TestRunFlags compares what run and tryrun parse against a wanted options
// value, field by field.
func TestRunFlags(t *testing.T) {
	defaults := func(o runOptions) runOptions {
		o.Global = testGlobal()
		if o.Flavor == "" {
			o.Flavor = flavorValue(recipe.FlavorCurator)
		}
		if o.ConflictCode == 0 {
			o.ConflictCode = ExitBusy
		}
		if o.KillGrace == 0 {
			o.KillGrace = lockexec.DefaultKillGrace
		}
		return o
	}
	for _, tc := range []struct {
		name   string
		newCmd func(*globalOptions, *ui, func(context.Context, *runOptions) error) *cobra.Command
		args   []string
		want   runOptions
	}{
		{"all", newCmdRun, []string{"--path", "/locks/a", "--timeout", "2s", "-E", "9", "--on-lost", "ignore",
			"--on-revoke", "ignore", "--kill-grace", "1s", "--max-runtime", "1h", "--", "sh", "-c", "echo --path x"},
			runOptions{Paths: []string{"/locks/a"}, Wait: waitlimit.AtMost(2 * time.Second), ConflictCode: 9,
				OnLost: onLostValue(lockexec.Ignore), OnRevoke: onLostValue(lockexec.Ignore), KillGrace: time.Second, MaxRuntime: time.Hour,
				Argv: []string{"sh", "-c", "echo --path x"}}}, // flags after -- belong to the command
		{"defaults", newCmdRun, []string{"--path", "/locks/a", "--", "true"},
			runOptions{Paths: []string{"/locks/a"}, Argv: []string{"true"}}},
		{"tryrun", newCmdTryrun, []string{"--path", "/locks/a", "--", "true"},
			runOptions{Paths: []string{"/locks/a"}, Wait: waitlimit.None, Argv: []string{"true"}}},
		{"no wait", newCmdRun, []string{"--path", "/locks/a", "--timeout", "0", "--", "true"},
			runOptions{Paths: []string{"/locks/a"}, Wait: waitlimit.None, Argv: []string{"true"}}},
		{"multi-path shared kazoo", newCmdRun, []string{"--path", "/b", "--path", "/a", "--shared", "--flavor", "kazoo", "--", "true"},
			runOptions{Paths: []string{"/b", "/a"}, Shared: true, Flavor: flavorValue(recipe.FlavorKazoo), Argv: []string{"true"}}},
		{"limit", newCmdRun, []string{"--path", "/a", "--limit", "3", "--", "true"},
			runOptions{Paths: []string{"/a"}, Limit: 3, Argv: []string{"true"}}},
	} {
		got, err := parseRun(t, tc.newCmd, tc.args...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := defaults(tc.want)
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: parsed\n%+v\nwant\n%+v", tc.name, *got, want)
		}
	}
}

func TestRunUsageErrors(t *testing.T) {
	cases := [][]string{
		{"--path", "/a"},
		{"--path", "/a", "--"},
		{"--path", "/a", "true"},
		{"--path", "/a", "x", "--", "true"},
		{"--", "true"},
		{"--path", "a", "--", "true"},
		{"--path", "/a/", "--", "true"},
		{"--path", "/zookeeper/x", "--", "true"},
		{"--path", "/a", "--timeout", "x", "--", "true"},
		{"--path", "/a", "--timeout", "-1s", "--", "true"},
		{"--path", "/a", "-E", "256", "--", "true"},
		{"--path", "/a", "-E", "-1", "--", "true"},
		{"--path", "/a", "--on-lost", "x", "--", "true"},
		{"--path", "/a", "--kill-grace", "-1s", "--", "true"},
		{"--nope", "--path", "/a", "--", "true"},
		{"--path", "/a", "--path", "/a", "--", "true"},
		{"--path", "/a", "--flavor", "etcd", "--", "true"},
		{"--path", "/a", "--limit", "-1", "--", "true"},
		{"--path", "/a", "--limit", "2", "--shared", "--", "true"},
		{"--path", "/a", "--limit", "2", "--flavor", "kazoo", "--", "true"},
	}
	for _, args := range cases {
		_, err := parseRun(t, newCmdRun, args...)
		var usage *UsageError
		if !errors.As(err, &usage) || exitCode(err) != ExitUsage {
			t.Errorf("%q: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
	if _, err := parseRun(t, newCmdTryrun, "--timeout", "1s", "--path", "/a", "--", "true"); exitCode(err) != ExitUsage {
		t.Errorf("tryrun has no --timeout: %v", err)
	}
}

func TestGlobalFlags(t *testing.T) {
	u := newUI(&bytes.Buffer{}, &bytes.Buffer{})
	g := &globalOptions{Servers: "zk1,zk2:2182/apps", SessionTimeout: time.Second, ConnectTimeout: time.Second, Auth: "digest:u:p"}
	o, err := g.connOptions(u)
	if err != nil || o.ConnString.Chroot != "/apps" || len(o.ConnString.Servers) != 2 || o.Auth.User() != "u" || o.TLS != nil {
		t.Errorf("connOptions = %+v, %v", o, err)
	}
	g.TLS = true
	if o, err := g.connOptions(u); err != nil || o.TLS == nil {
		t.Errorf("--tls: %+v, %v", o.TLS, err)
	}
	for _, bad := range []globalOptions{
		{Servers: "", SessionTimeout: time.Second, ConnectTimeout: time.Second},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: time.Second, Auth: "digest:nopw"},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: time.Second, TLSFiles: zkconn.TLSFiles{CA: "/nonexistent.pem"}},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: time.Second, TLSFiles: zkconn.TLSFiles{Cert: "/c.pem"}},
	} {
		if _, err := bad.connOptions(u); exitCode(err) != ExitUsage {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
