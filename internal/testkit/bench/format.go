package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// This file formats numbers, durations and command lines for the report.

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// processes says "1 process" or "N processes".
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func fmtDuration(sec float64) string {
	switch {
	case sec >= 120:
		return fmt.Sprintf("%.1f min", sec/60)
	case sec == math.Trunc(sec):
		return fmt.Sprintf("%.0f s", sec)
	default:
		return fmt.Sprintf("%.1f s", sec)
	}
}

// shortArgv drops the directories of absolute paths and long classpaths so
// the table stays readable.
func shortArgv(a []string) []string {
	out := make([]string, 0, len(a))
	for i, s := range a {
		switch {
		case i > 0 && a[i-1] == "-cp":
			out = append(out, "…")
		case strings.HasPrefix(s, "/") && !strings.Contains(s, " ") && i == 0:
			out = append(out, filepath.Base(s))
		case strings.HasPrefix(s, "/tmp/") || strings.HasPrefix(s, "/dev/shm/"):
			out = append(out, filepath.Base(s))
		case strings.HasPrefix(s, "127.0.0.1:"):
			out = append(out, "127.0.0.1:PORT")
		default:
			out = append(out, s)
		}
	}
	return out
}

// filterBench keeps the benchmark lines and the header of go test output.
func filterBench(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "goos:") || strings.HasPrefix(l, "goarch:") ||
			strings.HasPrefix(l, "cpu:") || strings.HasPrefix(l, "pkg:") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// shortVersion keeps the leading version number of a version string such
// as ZooKeeper's "3.8.0-${mvngit.commit.id}, built on …".
func shortVersion(v string) string {
	if i := strings.IndexAny(v, "-, "); i > 0 {
		return v[:i]
	}
	return v
}

// load1 is the one-minute figure of a /proc/loadavg excerpt.
func load1(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
