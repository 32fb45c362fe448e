package cmd

import (
	"bytes"
	"context"
	"slices"
	"testing"
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
