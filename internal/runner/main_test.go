package runner

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// TestMain lets the test binary serve as the watchdog that Run starts (it
// runs zklock's own executable again), and shares one server, started by
// the first test that needs it.
func TestMain(m *testing.M) {
	if lockexec.IsWatchdog() {
		os.Exit(lockexec.WatchdogMain())
	}
	zktest.UnignoreSignals()
	shared.Main(m)
}

// testLog is a Logf for Run that stops writing once the test has ended:
// a line from a goroutine after that would panic the test binary.
func testLog(t *testing.T) func(string, ...any) {
	var mu sync.Mutex
	done := false
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
	})
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Logf(format, args...)
		}
	}
}

// runOptions is a run of argv under an exclusive lock at a path of the
// test's own, against the shared server.
func runOptions(t *testing.T, argv ...string) Options {
	t.Helper()
	cs, err := zkconn.ParseConnString(shared.Server(t).ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	log := testLog(t)
	return Options{
		Conn:         zkconn.Options{ConnString: cs, SessionTimeout: 4 * time.Second, ConnectTimeout: 10 * time.Second},
		Paths:        []string{shared.Path(t)},
		Argv:         argv,
		Mode:         recipe.ModeExclusive,
		Wait:         waitlimit.Forever,
		ConflictCode: 75,
		Version:      "test",
		OnLost:       lockexec.Terminate,
		OnRevoke:     lockexec.Terminate,
		KillGrace:    time.Second,
		Logf:         log,
		Warnf:        log,
	}
}
