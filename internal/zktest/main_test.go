package zktest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// One standalone server and one 3-node ensemble are shared by all tests in
// this package (tests that kill or restart a server leave it serving).
var (
	shared          *Cluster
	sharedEnsemble  *Cluster
	standaloneStart time.Duration
	ensembleStart   time.Duration
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runOrphanHelper()
		return
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	c, err := StartStandalone(ctx, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting standalone ZooKeeper:", err)
		return 1
	}
	standaloneStart = time.Since(t0)
	shared = c
	defer stopAndCheck(c)

	t0 = time.Now()
	e, err := StartEnsemble(ctx, 3, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting ZooKeeper ensemble:", err)
		return 1
	}
	ensembleStart = time.Since(t0)
	sharedEnsemble = e
	defer stopAndCheck(e)

	return m.Run()
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
	t.Logf("standalone start: %v; 3-node ensemble start: %v", standaloneStart, ensembleStart)
}
