package zktest

import (
	"fmt"
	"os"
	"testing"
)

// One standalone server and one 3-node ensemble are shared by all tests in
// this package (tests that kill or restart a server leave it serving), each
// started by the first test that needs it.
var standalone, ensemble = Lazy{}, Lazy{Members: 3}

// shared is the standalone server; under -short the test is skipped.
func shared(t *testing.T) *Cluster {
	t.Helper()
	return standalone.Need(t)
}

// sharedEnsemble is the 3-node ensemble; under -short the test is skipped.
func sharedEnsemble(t *testing.T) *Cluster {
	t.Helper()
	return ensemble.Need(t)
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runOrphanHelper()
		return
	}
	code := m.Run()
	for _, l := range []*Lazy{&standalone, &ensemble} {
		if c, _ := l.Started(); c != nil {
			stopAndCheck(c)
		}
	}
	os.Exit(code)
}

// stopAndCheck stops c and verifies Stop's promises: no process left, the
// temporary directory gone, and a second Stop harmless.
func stopAndCheck(c *Cluster) {
	var pids []int
	for _, s := range c.Servers() {
		if pid := s.Pid(); pid != 0 {
			pids = append(pids, pid)
		}
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "Stop:", err)
		os.Exit(1)
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "second Stop:", err)
		os.Exit(1)
	}
	for _, pid := range pids {
		if ProcessAlive(pid) {
			fmt.Fprintf(os.Stderr, "Stop left process %d behind\n", pid)
			os.Exit(1)
		}
	}
	if _, err := os.Stat(c.Dir()); !os.IsNotExist(err) {
		fmt.Fprintf(os.Stderr, "Stop left %s behind (%v)\n", c.Dir(), err)
		os.Exit(1)
	}
}

func TestStartTimes(t *testing.T) {
	shared(t)
	sharedEnsemble(t)
	_, s := standalone.Started()
	_, e := ensemble.Started()
	t.Logf("standalone start: %v; 3-node ensemble start: %v", s, e)
}
