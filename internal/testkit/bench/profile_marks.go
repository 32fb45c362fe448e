package bench

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// marksEnv is the switch that makes zklock append a line per phase to a
// file (runner/marks.go): the phase, a tab, the wall clock in Unix
// nanoseconds. Timing phases by these lines, rather than by when -v lines
// arrive, does not depend on -v's wording and adds no pipe to the timings.
const marksEnv = "ZKLOCK_BENCH_MARKS"

// profilePhases are zklock's marks in the order a run reaches them, and
// what the time up to each one is spent on. exit is not a mark: it is the
// process's exit as the driver sees it.
var profilePhases = []struct{ mark, meaning string }{
	{"dialed", "process start, Go runtime, CLI parsing, TCP connect and the ConnectRequest round trip: the session is established"},
	{"acquired", "join the queue (create) and see that we are first (getChildren)"},
	{"command", "prepare the command (fencing token, environment, the loss guard); it is about to start"},
	{"released", "run the command (fork, exec, wait) and release the lock (closeSession)"},
	{"exit", "the rest: retiring the watchdog, process exit"},
}

// parseMarks returns, for each of profilePhases, the milliseconds from
// start to the phase's first mark in text, or -1 for a phase not marked.
// A run that dials again (a lost session) marks a phase more than once;
// the first counts, as it is the one on the uncontended path.
func parseMarks(text string, start time.Time) ([]float64, error) {
	at := make([]float64, len(profilePhases))
	for i := range at {
		at[i] = -1
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		phase, ns, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("unexpected mark line %q", sc.Text())
		}
		for i, p := range profilePhases {
			if p.mark == phase && at[i] < 0 {
				at[i] = float64(n-start.UnixNano()) / 1e6
			}
		}
	}
	return at, sc.Err()
}
