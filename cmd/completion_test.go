package cmd

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestCompleteChoices: every flag whose value has a fixed set of values
// completes them, on every command that has the flag, with no code of its
// own (the test finds the flags; it names none of them).
func TestCompleteChoices(t *testing.T) {
	root := newCmdRoot(newUI(&bytes.Buffer{}, &bytes.Buffer{}), true)
	seen := 0
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			ch, ok := f.Value.(choices)
			if !ok {
				return
			}
			seen++
			args := []string{cobra.ShellCompRequestCmd}
			if c != root {
				args = append(args, c.Name())
			}
			args = append(args, "--"+f.Name, "")
			var out bytes.Buffer
			if code := run(context.Background(), args, &out, &bytes.Buffer{}); code != 0 {
				t.Fatalf("%q: exit %d", args, code)
			}
			want := strings.Join(ch.Choices(), "\n") + "\n:4\n"
			if out.String() != want {
				t.Errorf("%q offers %q, want %q", args, out.String(), want)
			}
		})
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	root.InitDefaultHelpFlag()
	visit(root)
	if seen < 4 { // --sasl, and --flavor and --on-lost on run and tryrun
		t.Errorf("found %d flags with choices", seen)
	}
}

// TestCompletionScripts: each shell's script is printed, and bash can parse
// its own; another shell is a usage error.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"completion", sh}, &out, &errb); code != 0 || !strings.Contains(out.String(), "zklock") {
			t.Fatalf("%s: exit %d, %s", sh, code, errb.String())
		}
		if sh == "bash" {
			c := exec.Command("bash", "-n")
			c.Stdin = &out
			if msg, err := c.CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v: %s", err, msg)
			}
		}
	}
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"completion", "tcsh"}, &bytes.Buffer{}, &errb); code != ExitUsage {
		t.Errorf("completion tcsh: exit %d, %s", code, errb.String())
	}
}
