package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/promfile"
	"github.com/zklock/zklock/internal/runner"
)

// envMetricsFile gives --metrics-file from the environment.
const envMetricsFile = "ZKLOCK_METRICS_FILE"

// metricsFileValue is --metrics-file: a file that node_exporter's textfile
// collector reads, so its name ends in .prom (the collector skips any
// other, silently).
type metricsFileValue string

func (m *metricsFileValue) String() string { return string(*m) }
func (m *metricsFileValue) Type() string   { return "FILE" }

func (m *metricsFileValue) Set(s string) error {
	if !strings.HasSuffix(s, ".prom") || strings.HasSuffix(s, "/.prom") || s == ".prom" {
		return fmt.Errorf("%q does not end in NAME.prom: node_exporter's textfile collector reads only *.prom files", s)
	}
	*m = metricsFileValue(s)
	return nil
}

// metricsRun gathers what a run's metrics need from its events, and
// writes them once its exit code is known. A nil metricsRun (no
// --metrics-file) does nothing: a run without it never touches the file
// system for them.
type metricsRun struct {
	file  string
	paths []string // sorted: the first names the job

	waited    time.Duration
	hold      time.Duration
	held      bool
	resources []string // the pool members held, if any
}

func (m *metricsRun) event(e runner.Event) {
	if m == nil {
		return
	}
	switch e := e.(type) {
	case runner.Acquired:
		if e.Resource != "" {
			m.resources = append(m.resources, e.Resource)
		}
	case runner.WaitOver:
		m.waited = e.Waited
	case runner.Released:
		m.hold, m.held = e.Hold, true
	}
}

func (m *metricsRun) write(code int, outcome string) error {
	if m == nil || len(m.paths) == 0 {
		return nil
	}
	return promfile.Record(m.file, promfile.Run{Paths: m.paths, End: time.Now(), ExitCode: code, Outcome: outcome,
		Wait: m.waited, Hold: m.hold, Held: m.held, Resources: slices.Sorted(slices.Values(m.resources))})
}
