package e2e

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestSupersedeRaceAtRelease: a waiter is told to leave just as the holder
// releases: the newer contender starts at a random moment around the
// holder's end. Whichever way each round goes, exactly one of the two runs
// next, the other either leaves (75, superseded) or runs after it, nobody
// runs beside anyone (the overlap detector), and no node is left.
//
// The window itself is the waiter that was told to leave (its node has a
// "superseded_by" member) but had become next: it must run, not leave, or
// the queue would stall with nobody holding. The test reads the waiter's
// node while its command runs to count the rounds that hit it; the
// recipe's TestSupersedeToldAsItTakes holds the window open on purpose.
func TestSupersedeRaceAtRelease(t *testing.T) {
	base := lockPath(t)
	conn := rawZK(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	const rounds = 20
	var window, untold, superseded int
	// The newer one needs up to a few hundred ms to start and join: the holder's
	// command ends at a random moment of that.
	const spread = 400 * time.Millisecond
	for round := range rounds {
		path, dir := fmt.Sprintf("%s/r%d", base, round), t.TempDir()
		holder, holderErr := startGated(t, dir, "h", "run", "--supersede", "--path", path)
		zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
		waiter, waiterErr := startGated(t, dir, "w", "run", "--supersede", "--path", path)
		zktest.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return queueLen(conn, path) == 2 })
		touch(t, filepath.Join(dir, "n")) // the newer one's command ends at once
		newer, newerErr := startGated(t, dir, "n", "run", "--supersede", "--path", path)
		time.Sleep(time.Duration(rng.Int64N(int64(spread)))) // the random moment of the scenario
		touch(t, filepath.Join(dir, "h"))
		waiterDone := make(chan error, 1)
		go func() { waiterDone <- waiter.Wait() }()
		var code int
		outcome := ""
		zktest.Eventually(t, 30*time.Second, "the waiter to run or leave", func() bool {
			select {
			case err := <-waiterDone:
				code, outcome = zktest.ExitCodeT(t, err), "left"
				return true
			default:
			}
			if fileExists(filepath.Join(dir, "w.started")) {
				outcome = "ran"
				return true
			}
			return false
		})
		if outcome == "ran" {
			data, _, err := conn.Get(path + "/" + holderNode(t, conn, path))
			if err != nil {
				t.Fatalf("round %d: the waiter's node while it runs: %v", round, err)
			}
			if strings.Contains(string(data), `"superseded_by"`) {
				window++
			} else {
				untold++
			}
			touch(t, filepath.Join(dir, "w"))
			if code = zktest.ExitCodeT(t, <-waiterDone); code != 0 {
				t.Fatalf("round %d: the waiter ran, then exit %d: %s", round, code, waiterErr)
			}
		} else {
			superseded++
			if code != 75 || !strings.Contains(waiterErr.String(), "superseded by") {
				t.Fatalf("round %d: the waiter exit %d, want 75 superseded: %s", round, code, waiterErr)
			}
		}
		wantExit(t, holder, holderErr, 0, "the holder")
		wantExit(t, newer, newerErr, 0, "the newer contender")
		if !fileExists(filepath.Join(dir, "n.started")) {
			t.Fatalf("round %d: the newer contender exited 0 without running", round)
		}
		assertGone(t, conn, path)
	}
	t.Logf("%d rounds: %d waiters told to leave as they became next ran (the window), %d ran before being told, %d left superseded",
		rounds, window, untold, superseded)
	assertGone(t, conn, base)
}
