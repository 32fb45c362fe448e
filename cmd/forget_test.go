package cmd

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestForgetFlags: forget takes --path as run does, repeated, in the
// order given (the runner picks the record's path).
func TestForgetFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--path", "/a"},
		{"--path", "/b", "--path", "/a"},
	} {
		var got *forgetOptions
		c := newCmdForget(testGlobal(), newUI(&bytes.Buffer{}, &bytes.Buffer{}), func(_ context.Context, o *forgetOptions) error {
			got = o
			return nil
		})
		c.SetArgs(args)
		if err := c.Execute(); err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		var want []string
		for i := 1; i < len(args); i += 2 {
			want = append(want, args[i])
		}
		if !slices.Equal(got.Paths, want) {
			t.Errorf("%q: paths %q, want %q", args, got.Paths, want)
		}
	}
}

// TestCompleteForget: the shell completes the command's name, and its
// --path is completed from the server as every other --path is.
func TestCompleteForget(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{cobra.ShellCompRequestCmd, "fo"}, &out, &bytes.Buffer{}); code != 0 ||
		!strings.HasPrefix(out.String(), "forget\t") {
		t.Errorf("completing fo: exit %d, %q", code, out.String())
	}
	root := newCmdRoot(newUI(&bytes.Buffer{}, &bytes.Buffer{}), true)
	forget, _, err := root.Find([]string{"forget"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := forget.GetFlagCompletionFunc("path"); !ok {
		t.Error("forget --path has no completion")
	}
}
