package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// BenchmarkLossMargin measures what is left of the lock's timing margin
// on a loaded host: each iteration cuts a holder off from the server
// (its command a tree that ignores SIGTERM, so that only the SIGKILL at
// T − T/10 stops it) with a waiter queued behind, and takes the gap
// between the holder's last sign of life and the waiter's start, under
// the kernel lock of the overlap detector. It is a driver, not a test:
// scripts/margin.sh runs it for each session timeout and load and writes
// the table of docs/guide/lock-loss.md.
//
//	ZKLOCK_MARGIN_T     the session timeout (default 2s)
//	ZKLOCK_MARGIN_LOAD  cpu:N for N stress-ng CPU hogs, mem for a memory
//	                    burst (stress-ng --vm), empty for none; started
//	                    once the server runs, stopped at the end
//
// Metrics: min-gap-ms (the smallest gap; negative or absent when every
// run overlapped), overlaps (runs whose waiter found the holder's tree
// alive, or started before its last sign of life) and late-reports (lost
// holders that reported a possible overlap).
func BenchmarkLossMargin(b *testing.B) {
	timeout := "2s"
	if v := os.Getenv("ZKLOCK_MARGIN_T"); v != "" {
		timeout = v
	}
	T, err := time.ParseDuration(timeout)
	if err != nil {
		b.Fatalf("ZKLOCK_MARGIN_T: %v", err)
	}
	conn := rawZK(b)
	// A starved host starts a zklock slowly.
	pairStart = time.Minute
	b.Cleanup(func() { pairStart = 10 * time.Second })
	startLoad(b, os.Getenv("ZKLOCK_MARGIN_LOAD"), time.Duration(b.N+2)*(3*T+10*time.Second))
	var (
		minGap         = time.Duration(-1)
		overlaps, late int
	)
	for range b.N {
		proxy := zktest.NewProxyT(b, server(b).Addrs()[0])
		p := startPairRun(b, "trap '' TERM\n"+treeScript,
			[]string{"--servers", proxy.Addr(), "--session-timeout", timeout}, nil,
			[]string{"--session-timeout", timeout}, func(path string) int { return queueLen(conn, path) })
		proxy.Blackhole()
		if code := zktest.ExitCodeT(b, p.holder.Wait()); code != 76 {
			b.Errorf("holder exit %d, want 76: %s", code, p.holderErr.String())
		}
		if strings.Contains(p.holderErr.String(), "possible overlap") {
			late++
		}
		code := zktest.ExitCodeT(b, p.waiter.Wait())
		gap := time.Duration(lastStamp(b, filepath.Join(p.dir, "waiter")) - lastStamp(b, filepath.Join(p.dir, "holder")))
		switch {
		case code == overlapExit:
			overlaps++
			b.Logf("OVERLAP: the waiter found the holder's tree alive; holder:\n%s", p.holderErr.String())
			continue
		case code != 0:
			b.Fatalf("waiter exit %d: %s", code, p.waiterErr.String())
		case gap <= 0:
			overlaps++
			b.Logf("OVERLAP: the waiter started %s before the holder's last sign of life; holder:\n%s", -gap, p.holderErr.String())
		}
		if minGap < 0 || gap < minGap {
			minGap = gap
		}
		proxy.Close()
	}
	b.ReportMetric(float64(minGap.Microseconds())/1000, "min-gap-ms")
	b.ReportMetric(float64(overlaps), "overlaps")
	b.ReportMetric(float64(late), "late-reports")
}

// startLoad starts stress-ng for load ("cpu:N" or "mem"), bounded by
// limit, and stops it when b ends.
func startLoad(b *testing.B, load string, limit time.Duration) {
	var args []string
	switch {
	case load == "":
		return
	case strings.HasPrefix(load, "cpu:"):
		args = []string{"--cpu", strings.TrimPrefix(load, "cpu:")}
	case load == "mem":
		// Four workers touching 1.5 GiB each, over and over: page faults
		// and reclaim for everyone on the host.
		args = []string{"--vm", "4", "--vm-bytes", "1536M", "--vm-method", "all"}
	default:
		b.Fatalf("ZKLOCK_MARGIN_LOAD %q: want cpu:N or mem", load)
	}
	c := exec.Command("stress-ng", append(args, "--timeout", limit.Round(time.Second).String())...)
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// stress-ng stops its workers on SIGTERM.
		_ = c.Process.Signal(syscall.SIGTERM)
		_ = c.Wait()
	})
}
