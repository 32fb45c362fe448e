package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config holds every count and duration of a run. Each has an environment
// variable (listed in envDoc) so a run can be made longer or shorter without
// editing code; -quick starts from smaller defaults.
type Config struct {
	Quick bool `json:"quick"`
	// Tools restricts the run to these tool keys (zklock, minimal, etcd,
	// flock, kazoo, curator); zklock is always measured.
	Tools []string `json:"tools"`

	// Uncontended `TOOL -- true` runs per tool, by how costly a start is.
	UncontendedRuns       int `json:"uncontended_runs"`
	UncontendedRunsPython int `json:"uncontended_runs_python"`
	UncontendedRunsJVM    int `json:"uncontended_runs_jvm"`
	// UncontendedWarmup runs per tool are made first and not counted.
	UncontendedWarmup int `json:"uncontended_warmup"`

	// Contended throughput: Loops concurrent loops on one lock, each
	// counted for Window after Warmup.
	ContendedLoops  []int         `json:"contended_loops"`
	ContendedWindow time.Duration `json:"contended_window_ns"`
	ContendedWarmup time.Duration `json:"contended_warmup_ns"`
	// Peers that start an interpreter or a JVM per acquisition are measured
	// only up to these loop counts: 50 JVMs starting at once on two cores
	// measure the scheduler, not the lock (and take half a minute to drain).
	ContendedMaxLoopsPython int `json:"contended_max_loops_python"`
	ContendedMaxLoopsJVM    int `json:"contended_max_loops_jvm"`

	// Handoff: Waiters processes queue behind a holder, Rounds times.
	HandoffWaiters       int `json:"handoff_waiters"`
	HandoffWaitersPython int `json:"handoff_waiters_python"`
	HandoffWaitersJVM    int `json:"handoff_waiters_jvm"`
	HandoffRounds        int `json:"handoff_rounds"`
	// Handoff to the next in line: a holder and one waiter, PairRounds
	// times (PairRoundsSlow for the Kazoo and Curator runners, whose every
	// round starts two interpreters or JVMs).
	HandoffPairRounds     int `json:"handoff_pair_rounds"`
	HandoffPairRoundsSlow int `json:"handoff_pair_rounds_slow"`

	// QueueSizes are the zklock queue lengths whose drain and per-release
	// server work are measured.
	QueueSizes []int `json:"queue_sizes"`

	// ListSizes are the tree sizes (znodes) `zklock list` is timed on,
	// ListRuns times each.
	ListSizes []int `json:"list_sizes,omitempty"`
	ListRuns  int   `json:"list_runs,omitempty"`

	// ProfileRuns are the `zklock -v run -- true` runs whose progress lines
	// are timed to see where an uncontended run spends its time.
	ProfileRuns int `json:"profile_runs"`

	// IdleWaiters zklock waiters queue behind a holder; for IdleWindow the
	// server's counters show what they cost it, and their memory is read.
	IdleWaiters int           `json:"idle_waiters,omitempty"`
	IdleWindow  time.Duration `json:"idle_window_ns,omitempty"`
	// StormContenders `zklock run --once-per` processes start at once on
	// one path, as a fleet's cron does on the hour.
	StormContenders int `json:"storm_contenders,omitempty"`
	// CrowdTimeout bounds each process of those two scenarios, which can
	// take minutes to start, queue and drain on a small machine.
	CrowdTimeout time.Duration `json:"crowd_timeout_ns,omitempty"`

	// FloorRounds are the handoff probe's floor runs and ZooKeeper's own
	// close-to-watch rounds; KeepalivePeriods the session timeouts over
	// which an idle holder's packets are counted.
	FloorRounds      int `json:"floor_rounds,omitempty"`
	KeepalivePeriods int `json:"keepalive_periods,omitempty"`

	// ProcTimeout bounds any single tool process; a hung one is stopped
	// and reported rather than hanging the run.
	ProcTimeout time.Duration `json:"proc_timeout_ns"`
}

// envVar is an environment variable that sets a count, and what it means.
type envVar struct{ Name, Meaning string }

// envDoc lists the environment variables, for the report and for -h.
var envDoc = []envVar{
	{"BENCH_TOOLS", "tools to measure, space-separated keys (default `zklock minimal etcd flock kazoo curator`; `--quick`: the first four)"},
	{"BENCH_UNCONTENDED_RUNS", "uncontended runs for zklock, etcdctl lock and flock"},
	{"BENCH_UNCONTENDED_RUNS_PYTHON", "uncontended runs for the Kazoo runner"},
	{"BENCH_UNCONTENDED_RUNS_JVM", "uncontended runs for the Curator runner"},
	{"BENCH_UNCONTENDED_WARMUP", "uncounted warm-up runs per tool"},
	{"BENCH_CONTENDED_LOOPS", "concurrent loops for the throughput test, space-separated"},
	{"BENCH_CONTENDED_SECONDS", "seconds counted per (tool, loops) cell"},
	{"BENCH_CONTENDED_WARMUP_SECONDS", "seconds run before counting starts"},
	{"BENCH_CONTENDED_MAX_LOOPS_PYTHON", "largest loop count for the Kazoo runner"},
	{"BENCH_CONTENDED_MAX_LOOPS_JVM", "largest loop count for the Curator runner"},
	{"BENCH_HANDOFF_WAITERS", "queued waiters per handoff round (zklock, etcdctl lock, flock)"},
	{"BENCH_HANDOFF_WAITERS_PYTHON", "queued waiters per handoff round for the Kazoo runner"},
	{"BENCH_HANDOFF_WAITERS_JVM", "queued waiters per handoff round for the Curator runner"},
	{"BENCH_HANDOFF_ROUNDS", "handoff rounds per tool"},
	{"BENCH_HANDOFF_PAIR_ROUNDS", "rounds of a holder and one waiter (zklock, etcdctl lock, flock)"},
	{"BENCH_HANDOFF_PAIR_ROUNDS_SLOW", "rounds of a holder and one waiter for the Kazoo and Curator runners"},
	{"BENCH_QUEUE_SIZES", "zklock queue lengths for the drain / per-release test, space-separated"},
	{"BENCH_LIST_SIZES", "tree sizes in znodes for the `zklock list` test, space-separated"},
	{"BENCH_LIST_RUNS", "timed runs per tree size and command in the `zklock list` test"},
	{"BENCH_PROFILE_RUNS", "timed `zklock -v run -- true` runs for the time breakdown"},
	{"BENCH_IDLE_WAITERS", "zklock waiters queued for the idle-waiter test"},
	{"BENCH_IDLE_SECONDS", "seconds over which the idle waiters' requests are counted"},
	{"BENCH_STORM_CONTENDERS", "`zklock run --once-per` processes started at once in the storm test"},
	{"BENCH_CROWD_TIMEOUT_SECONDS", "hard limit for any one process of the idle-waiter and storm tests"},
	{"BENCH_PROC_TIMEOUT_SECONDS", "hard limit for any one tool process"},
	{"BENCH_MICRO", "`0` skips the lock package's Go micro-benchmarks, `1` runs them (scripts/bench.sh; default 1, `--quick`: 0)"},
	{"BENCH_LOGS", "where the servers' and tools' logs go (scripts/bench.sh; default `${TMPDIR:-/tmp}/zklock-bench-logs`)"},
}

// defaultConfig is the full run, or the quick one.
func defaultConfig(quick bool) Config {
	c := Config{
		Quick:                   quick,
		Tools:                   []string{"zklock", "minimal", "etcd", "flock", "kazoo", "curator"},
		UncontendedRuns:         200,
		UncontendedRunsPython:   40,
		UncontendedRunsJVM:      12,
		UncontendedWarmup:       3,
		ContendedLoops:          []int{1, 10, 50},
		ContendedWindow:         4 * time.Second,
		ContendedWarmup:         time.Second,
		ContendedMaxLoopsPython: 50,
		ContendedMaxLoopsJVM:    10,
		HandoffWaiters:          50,
		HandoffWaitersPython:    20,
		HandoffWaitersJVM:       8,
		HandoffRounds:           4,
		HandoffPairRounds:       40,
		HandoffPairRoundsSlow:   8,
		QueueSizes:              []int{25, 50, 100, 200},
		ListSizes:               []int{listTargetSmall, listTargetLarge},
		ListRuns:                3,
		ProfileRuns:             50,
		IdleWaiters:             1000,
		IdleWindow:              20 * time.Second,
		StormContenders:         1000,
		CrowdTimeout:            5 * time.Minute,
		FloorRounds:             100,
		KeepalivePeriods:        3,
		ProcTimeout:             2 * time.Minute,
	}
	if quick {
		// A smoke run of every scenario, well under a minute: the
		// interpreter and JVM peers only when BENCH_TOOLS names them.
		c.Tools = []string{"zklock", "minimal", "etcd", "flock"}
		c.UncontendedRuns = 20
		c.UncontendedRunsPython = 5
		c.UncontendedRunsJVM = 2
		c.UncontendedWarmup = 1
		c.ContendedLoops = []int{1, 10}
		c.ContendedWindow = time.Second
		c.ContendedWarmup = 300 * time.Millisecond
		c.ContendedMaxLoopsPython = 1
		c.ContendedMaxLoopsJVM = 1
		c.HandoffWaiters = 10
		c.HandoffWaitersPython = 4
		c.HandoffWaitersJVM = 2
		c.HandoffRounds = 1
		c.HandoffPairRounds = 3
		c.HandoffPairRoundsSlow = 1
		c.QueueSizes = []int{10, 25}
		c.ListSizes = []int{2000}
		c.ListRuns = 1
		c.ProfileRuns = 10
		c.IdleWaiters = 30
		c.IdleWindow = 3 * time.Second
		c.StormContenders = 30
		c.CrowdTimeout = time.Minute
		c.FloorRounds = 20
		c.KeepalivePeriods = 1
	}
	return c
}

// envReader sets Config fields from BENCH_* variables; the first bad value
// is its err, and later calls do nothing.
type envReader struct{ err error }

// value is the variable's trimmed value, "" when unset, blank, or after an
// error.
func (r *envReader) value(name string) string {
	if r.err != nil {
		return ""
	}
	return strings.TrimSpace(os.Getenv(name))
}

func (r *envReader) ints(name string, dst ...*int) {
	v := r.value(name)
	if v == "" {
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.err = fmt.Errorf("%s=%q: want a non-negative integer", name, v)
		return
	}
	for _, d := range dst {
		*d = n
	}
}

func (r *envReader) list(name string, dst *[]int) {
	v := r.value(name)
	if v == "" {
		return
	}
	var out []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			r.err = fmt.Errorf("%s=%q: want positive integers separated by spaces", name, v)
			return
		}
		out = append(out, n)
	}
	*dst = out
}

func (r *envReader) seconds(name string, dst *time.Duration) {
	v := r.value(name)
	if v == "" {
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		r.err = fmt.Errorf("%s=%q: want a positive number of seconds", name, v)
		return
	}
	*dst = time.Duration(f * float64(time.Second))
}

// loadConfig is the default configuration with the BENCH_* variables of
// scripts/bench.sh applied.
func loadConfig(quick bool) (Config, error) {
	c := defaultConfig(quick)
	if v := strings.TrimSpace(os.Getenv("BENCH_TOOLS")); v != "" {
		c.Tools = strings.Fields(v)
		for _, t := range c.Tools {
			switch t {
			case "zklock", "minimal", "etcd", "flock", "kazoo", "curator":
			default:
				return c, fmt.Errorf("BENCH_TOOLS: unknown tool %q (want zklock, minimal, etcd, flock, kazoo, curator)", t)
			}
		}
	}
	var r envReader
	r.ints("BENCH_UNCONTENDED_RUNS", &c.UncontendedRuns)
	r.ints("BENCH_UNCONTENDED_RUNS_PYTHON", &c.UncontendedRunsPython)
	r.ints("BENCH_UNCONTENDED_RUNS_JVM", &c.UncontendedRunsJVM)
	r.ints("BENCH_UNCONTENDED_WARMUP", &c.UncontendedWarmup)
	r.list("BENCH_CONTENDED_LOOPS", &c.ContendedLoops)
	r.seconds("BENCH_CONTENDED_SECONDS", &c.ContendedWindow)
	r.seconds("BENCH_CONTENDED_WARMUP_SECONDS", &c.ContendedWarmup)
	r.ints("BENCH_CONTENDED_MAX_LOOPS_PYTHON", &c.ContendedMaxLoopsPython)
	r.ints("BENCH_CONTENDED_MAX_LOOPS_JVM", &c.ContendedMaxLoopsJVM)
	r.ints("BENCH_HANDOFF_WAITERS", &c.HandoffWaiters)
	r.ints("BENCH_HANDOFF_WAITERS_PYTHON", &c.HandoffWaitersPython)
	r.ints("BENCH_HANDOFF_WAITERS_JVM", &c.HandoffWaitersJVM)
	r.ints("BENCH_HANDOFF_ROUNDS", &c.HandoffRounds)
	r.ints("BENCH_HANDOFF_PAIR_ROUNDS", &c.HandoffPairRounds)
	r.ints("BENCH_HANDOFF_PAIR_ROUNDS_SLOW", &c.HandoffPairRoundsSlow)
	r.list("BENCH_QUEUE_SIZES", &c.QueueSizes)
	r.list("BENCH_LIST_SIZES", &c.ListSizes)
	r.ints("BENCH_LIST_RUNS", &c.ListRuns)
	r.ints("BENCH_PROFILE_RUNS", &c.ProfileRuns)
	r.ints("BENCH_IDLE_WAITERS", &c.IdleWaiters)
	r.seconds("BENCH_IDLE_SECONDS", &c.IdleWindow)
	r.ints("BENCH_STORM_CONTENDERS", &c.StormContenders)
	r.seconds("BENCH_CROWD_TIMEOUT_SECONDS", &c.CrowdTimeout)
	r.seconds("BENCH_PROC_TIMEOUT_SECONDS", &c.ProcTimeout)
	return c, r.err
}

func (c Config) wants(key string) bool {
	if key == "zklock" {
		return true
	}
	for _, t := range c.Tools {
		if t == key {
			return true
		}
	}
	return false
}
