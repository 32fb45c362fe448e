package cmd

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/fatih/color"
)

// TestColourPerStream: stderr is coloured from its own terminal state, not
// from stdout's (fatih/color's global, set from stdout, says no here), and
// NO_COLOR or TERM=dumb turn it off. The master side of a pseudo-terminal
// is a terminal as far as isatty is concerned.
func TestColourPerStream(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminals: %v", err)
	}
	defer tty.Close()
	saved := color.NoColor
	color.NoColor = true // as when stdout is not a terminal
	defer func() { color.NoColor = saved }()
	for _, tc := range []struct {
		noColor, term string
		want          bool
	}{
		{"", "xterm", true},
		{"1", "xterm", false},
		{"", "dumb", false},
	} {
		t.Setenv("NO_COLOR", tc.noColor)
		t.Setenv("TERM", tc.term)
		u := newUI(&bytes.Buffer{}, tty)
		if u.colorErr != tc.want || u.colorOut {
			t.Errorf("NO_COLOR=%q TERM=%q: stderr colour %v, stdout colour %v; want %v, false", tc.noColor, tc.term, u.colorErr, u.colorOut, tc.want)
		}
		if coloured := strings.Contains(u.prefix, "\x1b["); coloured != tc.want {
			t.Errorf("NO_COLOR=%q TERM=%q: prefix %q", tc.noColor, tc.term, u.prefix)
		}
	}
}
