package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// started is a zklock that a test started, and its one waiter, which the
// test owns: it ends when zklock does, and the cleanup makes sure of that.
type started struct {
	// exited is closed once zklock has exited; err is then what its
	// Wait returned.
	exited chan struct{}
	err    error
}

// start starts c and waits for it in the background. The cleanup sends it
// stop and waits for its exit.
func start(t *testing.T, c *exec.Cmd, stop os.Signal) *started {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{exited: make(chan struct{})}
	go func() {
		s.err = c.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		c.Process.Signal(stop)
		<-s.exited
	})
	return s
}

// wait returns zklock's exit, once it has exited.
func (s *started) wait() error {
	<-s.exited
	return s.err
}
