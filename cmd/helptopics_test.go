package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpStartsWithUsage: a command's help says what to type before it
// explains; the reference is in the help topics.
func TestHelpStartsWithUsage(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"tryrun", "--help"}, {"help", "run"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%q: exit %d (%s)", args, code, errb.String())
		}
		lines := strings.Split(out.String(), "\n")
		usage := -1
		for i, l := range lines {
			if l == "Usage:" {
				usage = i + 1
				break
			}
		}
		if usage < 1 || usage > 10 {
			t.Errorf("%q: Usage: is on line %d, want within the first 10", args, usage)
		}
		if len(lines) > 80 {
			t.Errorf("%q: %d lines, want at most 80", args, len(lines))
		}
		if !strings.Contains(out.String(), "zklock help exit-codes") {
			t.Errorf("%q: no pointer to zklock help exit-codes:\n%s", args, out.String())
		}
	}
}

// TestHelpTopics: each topic has its page, and the man pages carry them
// whole (CommandTree), since a page cannot point at zklock help NAME.
func TestHelpTopics(t *testing.T) {
	want := map[string]string{
		"exit-codes":  "Exit codes:",
		"environment": "Environment of CMD:",
		"events":      "Events (--log-format json)",
		"queue":       "--once-per D",
		"lock-loss":   "--on-revoke ignore",
	}
	for _, topic := range helpTopics {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"help", topic.name}, &out, &errb); code != 0 {
			t.Fatalf("help %s: exit %d (%s)", topic.name, code, errb.String())
		}
		if w := want[topic.name]; w == "" || !strings.Contains(out.String(), w) {
			t.Errorf("help %s does not say %q:\n%s", topic.name, w, out.String())
		}
	}
	for _, c := range CommandTree().Commands() {
		if c.Name() != "run" {
			continue
		}
		for _, w := range want {
			if !strings.Contains(c.Long, w) {
				t.Errorf("run's man page text lacks %q", w)
			}
		}
	}
}
