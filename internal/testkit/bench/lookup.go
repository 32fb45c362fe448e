package bench

import (
	"sort"
	"strings"
)

// This file finds a tool's results in Results, for the report and the plots.

// find returns the first element of xs that ok accepts, or nil.
func find[T any](xs []T, ok func(*T) bool) *T {
	for i := range xs {
		if ok(&xs[i]) {
			return &xs[i]
		}
	}
	return nil
}

func (r *Results) tool(key string) *ToolInfo {
	return find(r.Tools, func(t *ToolInfo) bool { return t.Key == key })
}

func (r *Results) toolName(key string) string {
	if t := r.tool(key); t != nil {
		return t.Name
	}
	return key
}

func (r *Results) latency(key string) *LatencyResult {
	return find(r.Uncontended, func(l *LatencyResult) bool { return l.Tool == key && l.Dist.N > 0 })
}

func (r *Results) throughput(key string, loops int) *ThroughputResult {
	return find(r.Contended, func(c *ThroughputResult) bool {
		return c.Tool == key && c.Loops == loops && c.Skipped == "" && c.Acquisitions > 0
	})
}

func findHandoff(list []HandoffResult, key string) *HandoffResult {
	return find(list, func(h *HandoffResult) bool { return h.Tool == key && h.Dist.N > 0 })
}

func (r *Results) memory(key string) *MemoryResult {
	return find(r.Memory, func(m *MemoryResult) bool { return m.Tool == key && m.RSSKiB > 0 })
}

// allHandoffs lists the one-waiter handoffs, then the queue's.
func (r *Results) allHandoffs() []HandoffResult {
	return append(append([]HandoffResult(nil), r.HandoffPair...), r.Handoff...)
}

// inContended reports whether the contended test has cells for the tool.
func (r *Results) inContended(key string) bool {
	for _, c := range r.Contended {
		if c.Tool == key {
			return true
		}
	}
	return false
}

// toolsInOrder lists zklock, its variants and cgo build, the minimal
// runner, then the peers.
func (r *Results) toolsInOrder() []ToolInfo {
	rank := func(key string) int {
		switch {
		case key == "zklock":
			return 0
		case strings.HasPrefix(key, "zklock-"):
			return 1
		case key == "minimal":
			return 2
		}
		return 3
	}
	out := append([]ToolInfo(nil), r.Tools...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Key) < rank(out[j].Key) })
	return out
}

// probe is the handoff probe's command line; results from before it was
// recorded used date.
func (r *Results) probe() string {
	if r.HandoffProbe == "" {
		return "date +%s%N"
	}
	return r.HandoffProbe
}
