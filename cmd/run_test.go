package cmd

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// parseRun runs the run/tryrun command's parsing and validation only.
func parseRun(t *testing.T, try bool, args ...string) (*runOptions, error) {
	t.Helper()
	var got *runOptions
	u := newUI(&bytes.Buffer{}, &bytes.Buffer{})
	g := &globalOptions{Servers: "127.0.0.1:2181", SessionTimeout: time.Second, ConnectTimeout: time.Second}
	c := newCmdRun(g, u, try, func(_ context.Context, o *runOptions) error {
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

func TestRunFlags(t *testing.T) {
	o, err := parseRun(t, false, "--path", "/locks/a", "--timeout", "2s", "-E", "9",
		"--on-lost", "ignore", "--kill-grace", "1s", "--max-runtime", "1h", "--", "sh", "-c", "echo --path x")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Paths) != 1 || o.Paths[0] != "/locks/a" || o.Timeout != 2*time.Second || !o.HasTimeout || o.ConflictCode != 9 ||
		o.OnLost != "ignore" || o.KillGrace != time.Second || o.MaxRuntime != time.Hour {
		t.Errorf("parsed %+v", o)
	}
	if len(o.Argv) != 3 || o.Argv[2] != "echo --path x" {
		t.Errorf("argv %q: flags after -- belong to the command", o.Argv)
	}
	o, err = parseRun(t, false, "--path", "/locks/a", "--", "true")
	if err != nil || o.HasTimeout || o.ConflictCode != ExitBusy || o.OnLost != "terminate" || o.KillGrace != lockexec.DefaultKillGrace {
		t.Errorf("defaults: %+v %v", o, err)
	}
	o, err = parseRun(t, true, "--path", "/locks/a", "--", "true")
	if err != nil || !o.Try || o.Flavor != "curator" {
		t.Errorf("tryrun: %+v %v", o, err)
	}
	o, err = parseRun(t, false, "--path", "/b", "--path", "/a", "--shared", "--flavor", "kazoo", "--", "true")
	if err != nil || len(o.Paths) != 2 || !o.Shared || o.Flavor != "kazoo" {
		t.Errorf("multi-path shared kazoo: %+v %v", o, err)
	}
	o, err = parseRun(t, false, "--path", "/a", "--limit", "3", "--", "true")
	if err != nil || o.Limit != 3 {
		t.Errorf("limit: %+v %v", o, err)
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
		_, err := parseRun(t, false, args...)
		var usage *UsageError
		if !errors.As(err, &usage) || exitCode(err) != ExitUsage {
			t.Errorf("%q: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
	if _, err := parseRun(t, true, "--timeout", "1s", "--path", "/a", "--", "true"); exitCode(err) != ExitUsage {
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
		{Servers: "zk1", SessionTimeout: 0, ConnectTimeout: time.Second},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: 0},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: time.Second, Auth: "digest:nopw"},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: time.Second, TLSFiles: zkconn.TLSFiles{CA: "/nonexistent.pem"}},
		{Servers: "zk1", SessionTimeout: time.Second, ConnectTimeout: time.Second, TLSFiles: zkconn.TLSFiles{Cert: "/c.pem"}},
	} {
		if _, err := bad.connOptions(u); exitCode(err) != ExitUsage {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
