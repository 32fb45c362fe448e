package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestFrozenAroundDeadline: the holder (T = 2s, a command tree that
// ignores SIGTERM) is cut off from its server, and its zklock is frozen
// (SIGSTOP) at moments before, between and after the SIGTERM moments of
// zklock and of its watchdog. Whoever acts, the holder's whole tree must
// be dead before the waiter's command starts, and the continued holder
// must exit 76 saying the lock was lost.
func TestFrozenAroundDeadline(t *testing.T) {
	for _, grace := range []string{"0s", "5s"} {
		for _, at := range []time.Duration{900 * time.Millisecond, 1400 * time.Millisecond, 1650 * time.Millisecond} {
			t.Run(fmt.Sprintf("grace %s frozen %s after the cut", grace, at), func(t *testing.T) {
				proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
				conn := rawZK(t)
				p := startPairRun(t, "trap '' TERM\n"+treeScript,
					[]string{"--servers", proxy.Addr(), "--session-timeout", "2s"}, []string{"--kill-grace", grace},
					[]string{"--session-timeout", "2s"}, func(path string) int { return queueLen(conn, path) })
				proxy.Blackhole()
				time.Sleep(at)
				if err := p.holder.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				gap := p.waiterNext(t)
				if err := p.holder.Process.Signal(syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
				p.holderLost(t)
				t.Logf("gap %s; holder's stderr:\n%s", gap.Round(time.Millisecond), p.holderErr.String())
			})
		}
	}
}

// TestNoGraceLossIsNotWatchdogs: with --kill-grace 0 a holder that runs on
// time and loses contact stops its command itself, at its own deadline,
// and says that contact was lost. Its watchdog, renewed all along, must
// not be the one reported ("was zklock stopped or starved?").
func TestNoGraceLossIsNotWatchdogs(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			proxy := zktest.NewProxyT(t, server(t).Addrs()[0])
			conn := rawZK(t)
			p := startPairRun(t, "trap '' TERM\n"+treeScript,
				[]string{"--servers", proxy.Addr(), "--session-timeout", "2s"}, []string{"--kill-grace", "0"},
				[]string{"--session-timeout", "2s"}, func(path string) int { return queueLen(conn, path) })
			proxy.Blackhole()
			p.holderLost(t)
			p.waiterNext(t)
			if strings.Contains(p.holderErr.String(), "stopped or starved") {
				t.Errorf("a holder that ran on time blames itself:\n%s", p.holderErr.String())
			}
		})
	}
}
