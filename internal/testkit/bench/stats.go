package bench

import (
	"math"
	"sort"
	"time"
)

// quantile returns the q-quantile (0..1) of sorted values, interpolating
// linearly between the two nearest ranks (the usual "type 7" definition,
// so the 0.5-quantile of an even count is the mean of the middle two).
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return sorted[0]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	hi := int(math.Ceil(h))
	return sorted[lo] + (h-float64(lo))*(sorted[hi]-sorted[lo])
}

// distMS summarises samples given in milliseconds.
func distMS(ms []float64) Dist {
	if len(ms) == 0 {
		return Dist{}
	}
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	mean := sum / float64(len(s))
	var ss float64
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	sd := 0.0
	if len(s) > 1 {
		sd = math.Sqrt(ss / float64(len(s)-1))
	}
	return Dist{
		N: len(s), Min: s[0], Max: s[len(s)-1], Mean: mean, Stddev: sd,
		P50: quantile(s, 0.5), P90: quantile(s, 0.9), P99: quantile(s, 0.99),
	}
}

func durationsMS(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

func medianInt(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
