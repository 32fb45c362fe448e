package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/waitlimit"
)

// TestRevokeFlags: what revoke waits for, from --wait and --timeout.
func TestRevokeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		node string
		wait waitlimit.Limit
	}{
		{[]string{"--path", "/a"}, "", waitlimit.None},
		{[]string{"--path", "/a", "--wait"}, "", waitlimit.Forever},
		{[]string{"--path", "/a", "--wait", "--timeout", "2s"}, "", waitlimit.AtMost(2 * time.Second)},
		{[]string{"--path", "/a", "--timeout", "2s"}, "", waitlimit.AtMost(2 * time.Second)},
		{[]string{"--path", "/a", "--node", "n-0000000001"}, "n-0000000001", waitlimit.None},
	} {
		var got *revokeOptions
		c := newCmdRevoke(testGlobal(), newUI(&bytes.Buffer{}, &bytes.Buffer{}), func(_ context.Context, o *revokeOptions) error {
			got = o
			return nil
		})
		c.SetArgs(tc.args)
		if err := c.Execute(); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if w := got.wait(c.Flags().Changed("timeout")); w != tc.wait || got.Node != tc.node || got.Path != "/a" {
			t.Errorf("%q: wait %+v node %q path %q, want wait %+v node %q", tc.args, w, got.Node, got.Path, tc.wait, tc.node)
		}
	}
}

// TestRevokeRefusals: a --node that names no one is refused before revoke
// connects. An empty one above all: unset in a script (--node "$NODE"), it
// must not widen the request to every holder.
func TestRevokeRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--node", ""}, `invalid argument "" for "--node" flag: empty: name a contender as list shows it`},
		{[]string{"--node", "foo"}, "bad node: foo is not a contender's name"},
	} {
		configEnv(t, "", "")
		var errb bytes.Buffer
		code := run(context.Background(), append([]string{"--servers", "127.0.0.1:1", "--connect-timeout", "1s", "revoke", "--path", "/a"}, tc.args...), &bytes.Buffer{}, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.msg) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit 64 and one line with %q", tc.args, code, errb.String(), tc.msg)
		}
	}
}
