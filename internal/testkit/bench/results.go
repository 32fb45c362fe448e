package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// resultsVersion changes when the JSON layout does.
const resultsVersion = 2

// Results is everything one run measured; results.json holds it and the
// report is rendered from it alone.
type Results struct {
	Version  int        `json:"version"`
	Started  time.Time  `json:"started"`
	Finished time.Time  `json:"finished"`
	Repro    string     `json:"repro"`
	Config   Config     `json:"config"`
	Machine  Machine    `json:"machine"`
	Tools    []ToolInfo `json:"tools"`

	Uncontended []LatencyResult    `json:"uncontended"`
	Contended   []ThroughputResult `json:"contended"`
	Handoff     []HandoffResult    `json:"handoff"`
	// HandoffPair is the handoff from a holder to a single waiter.
	HandoffPair []HandoffResult `json:"handoff_pair,omitempty"`
	// HandoffProbe is the command that prints each stamp: "stamp" (the
	// static internal/testkit/bench/stamp program) or "date +%s%N".
	HandoffProbe string `json:"handoff_probe,omitempty"`
	// HandoffFloor is the probe run twice, back to back, by the driver:
	// what a stamp-to-stamp interval costs with no lock at all.
	HandoffFloor *Dist `json:"handoff_floor,omitempty"`
	// ServerPart is ZooKeeper's own share of a handoff, timed from the
	// driver's sessions (see measureServerPart).
	ServerPart *ServerPart    `json:"server_part,omitempty"`
	Memory     []MemoryResult `json:"memory"`
	Queue      []QueueResult  `json:"queue"`
	// List is `zklock list` on trees of several sizes.
	List []ListResult `json:"list,omitempty"`
	// Keepalive is what one idle holder costs its server.
	Keepalive *KeepaliveResult `json:"keepalive,omitempty"`
	// Idle is a crowd of zklock waiters queued behind one holder.
	Idle *IdleResult `json:"idle,omitempty"`
	// Storm is a crowd of `run --once-per` contenders started at once.
	Storm   *StormResult `json:"storm,omitempty"`
	Profile *Profile     `json:"profile,omitempty"`
	// Phases are the measuring phases in order, with the machine's load
	// when each began.
	Phases []PhaseInfo `json:"phases,omitempty"`
	// Micro is the lock package's micro-benchmark output (go test -bench).
	Micro string `json:"micro,omitempty"`
	// Notes are things the reader must know: skipped cells and why,
	// failures, missing peers.
	Notes []string `json:"notes"`
}

// Machine describes where the run happened.
type Machine struct {
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	MemTotal string `json:"mem_total"`
	Kernel   string `json:"kernel"`
	OS       string `json:"os"`
	// LoadStart and LoadEnd are /proc/loadavg before and after the run:
	// anything else running on the machine shows up here.
	LoadStart string            `json:"load_start"`
	LoadEnd   string            `json:"load_end"`
	Versions  map[string]string `json:"versions"`
}

// ToolInfo is one measured tool.
type ToolInfo struct {
	Key  string   `json:"key"`
	Name string   `json:"name"`
	Argv []string `json:"argv"` // how a `true` run under lock NAME is started
	// Available is false when the tool could not be set up; Note says why.
	Available bool   `json:"available"`
	Note      string `json:"note,omitempty"`
}

// Dist summarises samples in milliseconds.
type Dist struct {
	N      int     `json:"n"`
	Min    float64 `json:"min_ms"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
	Mean   float64 `json:"mean_ms"`
	Stddev float64 `json:"stddev_ms"`
}

// PhaseInfo is one measuring phase.
type PhaseInfo struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// Load is /proc/loadavg's three figures when the phase began.
	Load  string `json:"load"`
	Error string `json:"error,omitempty"`
}

// LatencyResult is the uncontended `TOOL -- true` wall time, and the CPU
// time of the process and every descendant it waited for (rusage).
type LatencyResult struct {
	Tool   string `json:"tool"`
	Dist   Dist   `json:"dist"`
	CPU    Dist   `json:"cpu,omitzero"`
	Errors int    `json:"errors"`
	Error  string `json:"error,omitempty"`
}

// ThroughputResult is one (tool, loops) cell of the contended test.
type ThroughputResult struct {
	Tool         string  `json:"tool"`
	Loops        int     `json:"loops"`
	Acquisitions int     `json:"acquisitions"`
	Seconds      float64 `json:"seconds"`
	PerSecond    float64 `json:"per_second"`
	// CPUPerAcqMS is the CPU time (rusage, the processes and what they
	// waited for) of the runs counted, per acquisition.
	CPUPerAcqMS float64 `json:"cpu_per_acq_ms,omitempty"`
	Errors      int     `json:"errors"`
	Error       string  `json:"error,omitempty"`
	Skipped     string  `json:"skipped,omitempty"`
}

// HandoffResult is the time from one holder's command exit to the next
// waiter's command start, with every waiter already queued.
type HandoffResult struct {
	Tool    string `json:"tool"`
	Waiters int    `json:"waiters"`
	Rounds  int    `json:"rounds"`
	Dist    Dist   `json:"dist"`
	Error   string `json:"error,omitempty"`
}

// ServerPart is what ZooKeeper itself takes in a handoff: from a session's
// close to another session's watch event on its node, and a getChildren of
// a queue of QueueLen nodes.
type ServerPart struct {
	QueueLen     int  `json:"queue_len"`
	CloseToWatch Dist `json:"close_to_watch"`
	ListQueue    Dist `json:"list_queue"`
}

// MemoryResult is the resident memory of a process waiting for a held lock.
type MemoryResult struct {
	Tool string `json:"tool"`
	// RSSKiB is VmRSS summed over the waiting process and its descendants;
	// HWMKiB the same for VmHWM (the peak).
	RSSKiB    int64 `json:"rss_kib"`
	HWMKiB    int64 `json:"hwm_kib"`
	Processes int   `json:"processes"`
	// PssKiB is Pss summed the same way: shared pages (an executable's,
	// shared libraries') counted in proportion to the processes sharing
	// them, so it adds up to what the host spends: pages that a forked
	// process still shares with its parent, which VmRSS counts twice.
	PssKiB int64 `json:"pss_kib,omitempty"`
	// PrivateKiB is Private_Dirty summed the same way: what the waiter's
	// processes have to themselves.
	PrivateKiB int64  `json:"private_kib,omitempty"`
	Error      string `json:"error,omitempty"`
}

// IdleResult is a crowd of zklock waiters queued behind a holder that is
// a node of the driver's own session: what they cost the server while
// nothing happens, and the memory of those deep in the queue.
type IdleResult struct {
	Waiters int `json:"waiters"`
	// StartSeconds is from the first waiter's start until every waiter was
	// queued and the server idle.
	StartSeconds float64 `json:"start_seconds"`
	WindowMS     int64   `json:"window_ms"`
	// SessionTimeoutMS is the waiters' session timeout, and PingsPerSec
	// what go-zookeeper's pings (one per third of it) come to per waiter.
	SessionTimeoutMS int64   `json:"session_timeout_ms"`
	PingsPerSec      float64 `json:"pings_per_sec"`
	// Per waiter and second over the window: packets the server received
	// (pings included), and read and write requests.
	PacketsPerSec float64 `json:"packets_per_sec"`
	ReadsPerSec   float64 `json:"reads_per_sec"`
	WritesPerSec  float64 `json:"writes_per_sec"`
	// Sampled are the waiters deep in the queue whose memory was read:
	// Private_Dirty over each waiter's processes, and how many processes
	// each had.
	Sampled          int    `json:"sampled"`
	PrivateMedianKiB int64  `json:"private_median_kib"`
	PrivateMaxKiB    int64  `json:"private_max_kib"`
	ProcessesMax     int    `json:"processes_max"`
	Processes        int    `json:"processes"` // every waiter's, added up
	PssTotalKiB      int64  `json:"pss_total_kib,omitempty"`
	Error            string `json:"error,omitempty"`
}

// StormResult is Contenders `zklock run --once-per` processes started at
// once on one path whose job has no success recorded yet.
type StormResult struct {
	Contenders int `json:"contenders"`
	// SpreadMS is from the first start to the last; DoneMS from the last
	// start to the last exit.
	SpreadMS float64 `json:"spread_ms"`
	DoneMS   float64 `json:"done_ms"`
	// Runs is how many times the job ran; Skipped how many exited 75
	// (the job done within the window); Other any other exit.
	Runs    int `json:"runs"`
	Skipped int `json:"skipped"`
	Other   int `json:"other"`
	// Left are the contender nodes and sessions' ephemeral nodes still on
	// the server once every process had exited.
	Left int `json:"left"`
	// Per contender, from the server's counters: requests and packets.
	ReadsPer   float64 `json:"reads_per"`
	WritesPer  float64 `json:"writes_per"`
	PacketsPer float64 `json:"packets_per"`
	// CPUPerMS is the CPU time per contender process (rusage).
	CPUPerMS float64 `json:"cpu_per_ms"`
	Error    string  `json:"error,omitempty"`
}

// QueueResult is one queue length of the zklock drain test.
type QueueResult struct {
	Waiters int `json:"waiters"`
	// Releases counts every release: the holder's and each waiter's.
	// Handoffs are the releases with a waiter behind them (= Waiters).
	Releases int `json:"releases"`
	Handoffs int `json:"handoffs"`
	// DrainMS runs from the holder's command exit (its stamp) to the last
	// waiter's process exit.
	DrainMS float64 `json:"drain_ms"`
	// Handoff is the stamp-to-stamp interval between consecutive holders.
	Handoff Dist `json:"handoff"`
	// Deltas are mntr counters over the drain: after minus before.
	Deltas map[string]int64 `json:"deltas"`
	// WaiterRSS* summarise VmRSS of the queued waiters (each with its
	// children) just before the release.
	WaiterRSSMedianKiB int64  `json:"waiter_rss_median_kib"`
	WaiterRSSMaxKiB    int64  `json:"waiter_rss_max_kib"`
	Error              string `json:"error,omitempty"`
}

// Profile splits an uncontended zklock run into phases.
type Profile struct {
	Runs   int            `json:"runs"`
	Phases []ProfilePhase `json:"phases"`
	// Marks says the phases were timed by the marks zklock writes when
	// ZKLOCK_BENCH_MARKS names a file. Results without it timed `zklock -v`
	// by when its progress lines reached the driver, with other phases.
	Marks bool `json:"marks,omitempty"`
	// TrueMS is fork+exec+wait of /bin/true from the driver; VersionMS is
	// `zklock version`: process start, Go runtime and CLI set-up, no
	// network.
	TrueMS    float64 `json:"true_ms"`
	VersionMS float64 `json:"version_ms"`
	TotalMS   float64 `json:"total_ms"`
	// Costs split a run's CPU time into the processes it starts and what
	// they do (see measureCosts).
	Costs []Cost `json:"costs,omitempty"`
	// Minimal is the minimal runner's traffic per run, counted as zklock's
	// is below.
	Minimal *RunCounts `json:"minimal,omitempty"`
	// Per run, from the server's mntr counters over the profiled runs: read and
	// write requests of every kind (session creation and closing are
	// writes; the driver's own idle session adds a ping now and then),
	// read requests on the lock path, znodes created or deleted there
	// (closing a session deletes its ephemeral nodes), and all packets.
	ReadRequests  float64 `json:"read_requests_per_run"`
	WriteRequests float64 `json:"write_requests_per_run"`
	LockReads     float64 `json:"lock_reads_per_run"`
	LockWrites    float64 `json:"lock_znode_changes_per_run"`
	PacketsIn     float64 `json:"packets_in_per_run"`
	PacketsOut    float64 `json:"packets_out_per_run"`
	Error         string  `json:"error,omitempty"`
}

// RunCounts are a tool's requests and packets per uncontended run, from
// the server's mntr counters.
type RunCounts struct {
	Runs          int     `json:"runs"`
	ReadRequests  float64 `json:"read_requests_per_run"`
	WriteRequests float64 `json:"write_requests_per_run"`
	PacketsIn     float64 `json:"packets_in_per_run"`
	PacketsOut    float64 `json:"packets_out_per_run"`
}

// Cost is the median wall and CPU time (rusage) of one process run by
// the driver, N times.
type Cost struct {
	What    string  `json:"what"`
	Meaning string  `json:"meaning"`
	N       int     `json:"n"`
	WallMS  float64 `json:"wall_ms"`
	CPUMS   float64 `json:"cpu_ms"`
}

// ProfilePhase is the median time from the previous mark to this one.
type ProfilePhase struct {
	Mark    string  `json:"mark"`
	Meaning string  `json:"meaning"`
	AtMS    float64 `json:"at_ms"`    // median time since the process started
	DeltaMS float64 `json:"delta_ms"` // median of (this mark − previous mark)
	Seen    int     `json:"seen"`     // runs in which the mark was seen
}

func writeResults(path string, r *Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Version != resultsVersion {
		return nil, fmt.Errorf("%s: results version %d, want %d (rerun scripts/bench.sh)", path, r.Version, resultsVersion)
	}
	return &r, nil
}

// KeepaliveResult is the server's packet count for one idle zklock holder,
// per session timeout.
type KeepaliveResult struct {
	SessionTimeoutMS int64   `json:"session_timeout_ms"`
	Periods          int     `json:"periods"`
	PacketsPerT      float64 `json:"packets_per_t"`
	Error            string  `json:"error,omitempty"`
}

// ListResult is `zklock list` on one tree, against ZooKeeper's CLI walking
// the same tree (`ls -R`). Times are medians of Runs whole processes, so
// they include start-up and connecting; the Empty times are the same
// commands on a path with nothing below it.
type ListResult struct {
	Znodes        int     `json:"znodes"`
	Locks         int     `json:"locks"`
	Runs          int     `json:"runs"`
	ZklockMS      float64 `json:"zklock_ms"`
	ZklockEmptyMS float64 `json:"zklock_empty_ms"`
	PeerMS        float64 `json:"peer_ms,omitempty"`
	PeerEmptyMS   float64 `json:"peer_empty_ms,omitempty"`
	Error         string  `json:"error,omitempty"`
}
