package runner

import (
	"fmt"
	"os"
	"time"
)

// marksEnv names a file to which a run appends one line per phase: the
// phase, a tab, and the wall clock in Unix nanoseconds. The benchmark
// driver (internal/testkit/bench) times zklock's phases by these lines rather than
// by the wording of -v. It is not a user interface: neither --help nor the
// documentation mentions it.
const marksEnv = "ZKLOCK_BENCH_MARKS"

// marks writes the phase lines; a nil *marks (the switch unset, or the
// file unusable) writes nothing.
type marks struct{ f *os.File }

func openMarks() *marks {
	name := os.Getenv(marksEnv)
	if name == "" {
		return nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return &marks{f: f}
}

// mark records that phase has been reached. One write per line, so lines
// from concurrent runs sharing the file never interleave.
func (m *marks) mark(phase string) {
	if m != nil {
		fmt.Fprintf(m.f, "%s\t%d\n", phase, time.Now().UnixNano())
	}
}

func (m *marks) close() {
	if m != nil {
		m.f.Close()
	}
}
