package zkcli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Race reports from the zklock processes a test runs.
//
// A zklock child is this test binary, so under -race it reports a data
// race itself and exits 66, which a test reads as zklock's own failure.
// One race is go-zookeeper's, not zklock's: on every reconnect its
// connection loop reads the last zxid seen (sendSetWatches, to ask the
// server to re-arm the client's watches from there) while the receive
// loop it has just started may already write it from a reply (recvLoop),
// with no lock between them (v1.0.4, conn.go). The value is one aligned
// 64-bit word, so the read sees the old or the new zxid, and an older one
// only makes the server deliver a watch event zklock would have had
// anyway. zklock cannot order the two from outside the library, and a
// holder reconnects with watches set whenever a leader restarts, so the
// ensemble tests hit it.
//
// So the children write their reports to files instead (GORACE
// log_path), with exit code 0 for a race, and after the tests every
// report that is not that one fails the package, printed in full: a race
// in zklock's own code still fails the run, one test later than it
// would have.

// knownRace is go-zookeeper's race, by the two functions it is between.
var knownRace = []string{"zk.(*Conn).sendSetWatches(", "zk.(*Conn).recvLoop("}

// collectRaces points the race detector of every child at a directory,
// and returns the function that checks what they wrote there, reporting
// how many foreign races it printed to w.
func collectRaces(w io.Writer) (check func() int, err error) {
	if !raceEnabled {
		return func() int { return 0 }, nil
	}
	dir, err := os.MkdirTemp("", "zklock-races-")
	if err != nil {
		return nil, err
	}
	opts := strings.TrimSpace(os.Getenv("GORACE") + " exitcode=0 log_path=" + filepath.Join(dir, "race"))
	if err := os.Setenv("GORACE", opts); err != nil {
		return nil, err
	}
	return func() int {
		defer os.RemoveAll(dir)
		return foreignRaces(dir, w)
	}, nil
}

// foreignRaces prints every race report in dir's files other than
// knownRace, and returns how many it printed.
func foreignRaces(dir string, w io.Writer) int {
	files, _ := filepath.Glob(filepath.Join(dir, "race*"))
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, r := range splitReports(string(data)) {
			if isKnownRace(r) {
				continue
			}
			n++
			fmt.Fprintf(w, "data race in a zklock child (%s):\n%s\n", filepath.Base(f), r)
		}
	}
	return n
}

// splitReports cuts a race log into its reports, each between two lines
// of "=" signs and starting with WARNING: DATA RACE.
func splitReports(log string) []string {
	var out []string
	for _, part := range strings.Split(log, "==================\n") {
		if strings.Contains(part, "WARNING: DATA RACE") {
			out = append(out, part)
		}
	}
	return out
}

func isKnownRace(report string) bool {
	for _, fn := range knownRace {
		if !strings.Contains(report, fn) {
			return false
		}
	}
	return true
}
