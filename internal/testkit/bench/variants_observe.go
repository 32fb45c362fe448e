package bench

import "fmt"

// What the observability options cost: zklock's uncontended run with
// --log-format json, and with --metrics-file (written into the run's log
// directory), each beside plain zklock in the same run. Plain zklock sets
// up neither (no slog handler, no file), so its own rows are the cost of
// the default.
const (
	jsonVsPlain    = 1.1
	metricsVsPlain = 1.1
)

func init() {
	variants = append(variants,
		Variant{Key: "zklock-json", Name: "zklock --log-format json", Args: []string{"--log-format", "json"},
			Note: "every line on stderr a JSON event"},
		Variant{Key: "zklock-metrics", Name: "zklock --metrics-file", Args: []string{"--metrics-file", "{logdir}/zklock.prom"},
			Note: "one metrics file that every run rewrites under its kernel lock"},
	)
	extraTargets = append(extraTargets, observeTargets)
}

// observeTargets bound each option's uncontended median against plain
// zklock's.
func observeTargets(r *Results) []Target {
	var out []Target
	plain := r.latency("zklock")
	for _, v := range []struct {
		key   string
		ratio float64
	}{{"zklock-json", jsonVsPlain}, {"zklock-metrics", metricsVsPlain}} {
		t := Target{What: fmt.Sprintf("uncontended `run -- true`, median, %s vs without", r.toolName(v.key)),
			Want: fmt.Sprintf("≤ %s× zklock", trimFloat(v.ratio))}
		out = append(out, latencyAtMost(t, r.latency(v.key), plain, v.ratio))
	}
	return out
}
