package e2e

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/zklock/zklock/internal/testkit/ptytest"
)

// atTerminal starts c with a new pseudo-terminal, width columns wide, as
// its stdin, stdout and stderr, and TERM set to term. The cleanup sends it
// stop and waits for its exit.
func atTerminal(t *testing.T, c *exec.Cmd, term string, width int, stop os.Signal) (*ptytest.PTY, *started) {
	t.Helper()
	return atScreen(t, c, term, 24, width, stop)
}

// atScreen is atTerminal on a terminal of rows by cols.
func atScreen(t *testing.T, c *exec.Cmd, term string, rows, cols int, stop os.Signal) (*ptytest.PTY, *started) {
	t.Helper()
	tty, slave := ptytest.Open(t)
	tty.SetSize(t, rows, cols)
	c.Env = append(c.Env, "TERM="+term)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	s := start(t, c, stop)
	slave.Close()
	return tty, s
}

// waitAtTerminal starts a zklock run whose stdin, stdout and stderr are a
// new pseudo-terminal, with TERM set to term. wait returns its exit.
func waitAtTerminal(t *testing.T, term string, args ...string) (tty *ptytest.PTY, wait func() error) {
	t.Helper()
	tty, s := atTerminal(t, zklock(t, args...), term, 500, syscall.SIGTERM)
	return tty, s.wait
}
