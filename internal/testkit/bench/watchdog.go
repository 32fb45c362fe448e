package bench

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// watchdogJSON holds the measurements of the watchdog's change of design:
// the in-memory watchdog (a fork without an exec and a loop in assembly)
// that gave way to zklock-watchdog. They were taken by hand, and the old
// watchdog is gone, so no run of the driver can take them again: the page
// renders them from this record every time, and they outlive each
// regeneration.
//
//go:embed watchdog.json
var watchdogJSON []byte

// watchdogHistory is watchdog.json: the machine's state while it was
// measured, and two tables of medians.
type watchdogHistory struct {
	Measured string `json:"measured"`
	Load     string `json:"load"` // the load average while measuring
	Cores    int    `json:"cores"`
	// IdleCPUms is the CPU of an uncontended run with the old watchdog on
	// the idle machine, from the report of the day: the load's factor is
	// taken from it.
	IdleCPUms   float64       `json:"idle_cpu_ms"`
	Runs        int           `json:"runs"`
	Warmup      int           `json:"warmup"`
	AllowanceMS float64       `json:"allowance_ms"` // the CPU the new design was allowed to add
	RunsTable   []watchdogRow `json:"runs_table"`   // zklock run -- true with each watchdog
	ProgramRuns int           `json:"program_runs"`
	Programs    []watchdogRow `json:"programs"` // each watchdog program started alone
}

// watchdogRow is one line of a table: medians of wall and CPU time.
type watchdogRow struct {
	What      string  `json:"what"`
	WallMS    float64 `json:"wall_ms"`
	CPUMS     float64 `json:"cpu_ms"`
	Before    bool    `json:"before"`    // the old design, which the others are held against
	Companion bool    `json:"companion"` // zklock-watchdog, the design chosen
	Floor     bool    `json:"floor"`     // an empty Go program
}

// watchdogPast is watchdog.json, read once: a record that does not parse
// is a mistake in the source, found by the first test of the package.
var watchdogPast = func() *watchdogHistory {
	h, err := readWatchdogHistory()
	if err != nil {
		panic(err)
	}
	return h
}()

func readWatchdogHistory() (*watchdogHistory, error) {
	var h watchdogHistory
	if err := json.Unmarshal(watchdogJSON, &h); err != nil {
		return nil, fmt.Errorf("watchdog.json: %w", err)
	}
	if h.before() == nil || h.companion(h.RunsTable) == nil || h.companion(h.Programs) == nil || h.floor() == nil || h.IdleCPUms <= 0 {
		return nil, fmt.Errorf("watchdog.json: a row is missing: the old design, the companion in each table, the floor, or the idle CPU")
	}
	return &h, nil
}

func (h *watchdogHistory) before() *watchdogRow {
	for i := range h.RunsTable {
		if h.RunsTable[i].Before {
			return &h.RunsTable[i]
		}
	}
	return nil
}

func (h *watchdogHistory) companion(rows []watchdogRow) *watchdogRow {
	for i := range rows {
		if rows[i].Companion {
			return &rows[i]
		}
	}
	return nil
}

func (h *watchdogHistory) floor() *watchdogRow {
	for i := range h.Programs {
		if h.Programs[i].Floor {
			return &h.Programs[i]
		}
	}
	return nil
}

// Load factor: how much the load inflated every figure, the old design's
// CPU under load over its CPU on the idle machine.
func (h *watchdogHistory) Factor() float64 { return h.before().CPUMS / h.IdleCPUms }

// CPUDelta is what row r's CPU adds to the old design's, "" for the old
// design itself.
func (h *watchdogHistory) CPUDelta(r watchdogRow) string {
	if r.Before {
		return ""
	}
	return fmt.Sprintf("%+.2f", r.CPUMS-h.before().CPUMS)
}

// OverFloor is what the companion costs over an empty Go program.
func (h *watchdogHistory) OverFloor() float64 {
	return h.companion(h.Programs).CPUMS - h.floor().CPUMS
}

// IdleAfter is the companion's uncontended CPU scaled to the idle
// machine, and IdleAdded what that adds to the old design's.
func (h *watchdogHistory) IdleAfter() float64 { return h.companion(h.RunsTable).CPUMS / h.Factor() }

func (h *watchdogHistory) IdleAdded() float64 { return h.IdleAfter() - h.IdleCPUms }

// WithinAllowance says whether the added CPU is within what was allowed.
func (h *watchdogHistory) WithinAllowance() bool { return h.IdleAdded() <= h.AllowanceMS }
