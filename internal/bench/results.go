package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// resultsVersion changes when the JSON layout does.
const resultsVersion = 1

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
	// static internal/bench/stamp program) or "date +%s%N".
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
	Profile   *Profile         `json:"profile,omitempty"`
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

// LatencyResult is the uncontended `TOOL -- true` wall time.
type LatencyResult struct {
	Tool   string `json:"tool"`
	Dist   Dist   `json:"dist"`
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
	Errors       int     `json:"errors"`
	Error        string  `json:"error,omitempty"`
	Skipped      string  `json:"skipped,omitempty"`
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
	// them, so it adds up to what the host spends. zklock's watchdog is
	// zklock's own executable, whose pages VmRSS counts twice.
	PssKiB int64  `json:"pss_kib,omitempty"`
	Error  string `json:"error,omitempty"`
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
