package bench

import (
	"math"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {1, 4}, {0.5, 2.5}, {0.9, 3.7}, {0.25, 1.75},
	} {
		if got := quantile(s, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v, %v) = %v, want %v", s, c.q, got, c.want)
		}
	}
	if got := quantile([]float64{7}, 0.99); got != 7 {
		t.Errorf("quantile of one sample = %v, want 7", got)
	}
	if got := quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile of nothing = %v, want NaN", got)
	}
}

func TestDistMS(t *testing.T) {
	in := []float64{5, 1, 3, 2, 4}
	got := distMS(in)
	want := Dist{N: 5, Min: 1, Max: 5, Mean: 3, Stddev: math.Sqrt(2.5), P50: 3, P90: 4.6, P99: 4.96}
	const eps = 1e-9
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"N", float64(got.N), float64(want.N)}, {"Min", got.Min, want.Min}, {"Max", got.Max, want.Max},
		{"Mean", got.Mean, want.Mean}, {"Stddev", got.Stddev, want.Stddev},
		{"P50", got.P50, want.P50}, {"P90", got.P90, want.P90}, {"P99", got.P99, want.P99},
	} {
		if math.Abs(f.got-f.want) > eps {
			t.Errorf("distMS(%v).%s = %v, want %v", in, f.name, f.got, f.want)
		}
	}
	if in[0] != 5 {
		t.Errorf("distMS sorted its input in place: %v", in)
	}
	if d := distMS(nil); d != (Dist{}) {
		t.Errorf("distMS(nil) = %+v, want the zero Dist", d)
	}
	if d := distMS([]float64{2}); d.Stddev != 0 || d.P99 != 2 {
		t.Errorf("distMS of one sample = %+v, want stddev 0 and every percentile 2", d)
	}
}

func TestMedianInt(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want int64
	}{{nil, 0}, {[]int64{9}, 9}, {[]int64{3, 1, 2}, 2}, {[]int64{4, 1, 3, 2}, 2}, {[]int64{10, 20}, 15}} {
		if got := medianInt(c.in); got != c.want {
			t.Errorf("medianInt(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestDurationsMS(t *testing.T) {
	got := durationsMS([]time.Duration{1500 * time.Microsecond, 2 * time.Second})
	if len(got) != 2 || got[0] != 1.5 || got[1] != 2000 {
		t.Errorf("durationsMS = %v, want [1.5 2000]", got)
	}
}
