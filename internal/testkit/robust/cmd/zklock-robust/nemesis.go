//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/robust"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// draw is every random number one fault uses, drawn at once in a fixed
// count whatever the kind, so that a seed replays the same schedule: the
// same kinds, targets and durations at the same times. (Which process a
// target index names depends on what runs then.)
type draw struct {
	target int     // an index, taken modulo the number of candidates
	frac   float64 // where the duration falls in the kind's range
	flip   bool    // the kind's variant: silent or reset, lowered or not…
}

// span is a duration in [lo, hi) at frac.
func span(lo, hi time.Duration, frac float64) time.Duration {
	return lo + time.Duration(frac*float64(hi-lo))
}

// fault is one kind of fault: inject it, wait, heal it. member marks the
// faults that take a member of the ensemble out (one at a time, so that a
// quorum stays); inject returns the target's name, or "" when there was
// nothing to hit.
type fault struct {
	name   string
	member bool
	inject func(ctx context.Context, n *nemesis, d draw) string
	// optIn faults are left out of "all": ones whose composition with
	// others breaks the lock by design, not by a fault of zklock's.
	optIn bool
}

var faults = []fault{
	{"kill", true, func(ctx context.Context, n *nemesis, d draw) string {
		return n.down(ctx, n.member(d.target), (*zktest.Server).Kill, d)
	}, false},
	{"kill-leader", true, func(ctx context.Context, n *nemesis, d draw) string {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		srv, err := n.s.cluster.Leader(lctx)
		if err != nil {
			return ""
		}
		return n.down(ctx, srv, (*zktest.Server).Kill, d)
	}, false},
	{"term", true, func(ctx context.Context, n *nemesis, d draw) string {
		return n.down(ctx, n.member(d.target), (*zktest.Server).Stop, d)
	}, false},
	{"freeze", true, func(ctx context.Context, n *nemesis, d draw) string {
		srv := n.member(d.target)
		pid := srv.Pid()
		if pid == 0 {
			return ""
		}
		syscall.Kill(pid, syscall.SIGSTOP)
		sleep(ctx, span(n.s.T/5, 2*n.s.T, d.frac))
		syscall.Kill(pid, syscall.SIGCONT)
		return srvName(srv)
	}, false},
	{"wipe", true, func(ctx context.Context, n *nemesis, d draw) string {
		return n.wipe(n.member(d.target), d.flip)
	}, false},
	{"isolate", true, func(ctx context.Context, n *nemesis, d draw) string {
		i := d.target % n.s.cluster.Len()
		how, what := (*zktest.Proxy).Blackhole, "silent"
		if d.flip {
			how, what = (*zktest.Proxy).Cut, "reset"
		}
		n.s.cluster.Isolate(i, how)
		sleep(ctx, span(n.s.T/2, 3*n.s.T, d.frac))
		n.s.cluster.HealAll()
		return fmt.Sprintf("server %d, %s", i+1, what)
	}, false},
	{"rolling", true, func(ctx context.Context, n *nemesis, d draw) string {
		// Half the rolling restarts lower maxSessionTimeout below T, so a
		// holder's timeout is renegotiated down as it reconnects; the
		// other half put the default back.
		value, what := "", "default maxSessionTimeout"
		if d.flip {
			value = strconv.FormatInt((n.s.T * 2 / 3).Milliseconds(), 10)
			what = "maxSessionTimeout " + value + "ms"
		}
		n.roll(value)
		return what
	}, false},
	{"renegotiate", true, func(ctx context.Context, n *nemesis, d draw) string {
		return n.renegotiate(ctx, d)
	}, false},
	{"skew", true, func(ctx context.Context, n *nemesis, d draw) string {
		srv := n.member(d.target)
		offset := span(30*time.Second, 5*time.Minute, d.frac)
		if d.flip {
			offset = -offset
		}
		env, err := zktest.Faketime(offset)
		if err != nil {
			n.s.fail(err)
			return ""
		}
		srv.SetEnv(env)
		n.restart(srv)
		sleep(ctx, 3*n.s.T)
		srv.SetEnv(nil)
		n.restart(srv)
		return fmt.Sprintf("%s, %+.0fs", srvName(srv), offset.Seconds())
	}, false},
	{"partition", false, func(ctx context.Context, n *nemesis, d draw) string {
		slot := d.target % len(n.s.proxies)
		what := "silent"
		for _, p := range n.s.proxies[slot] {
			if d.flip {
				p.Cut()
				what = "reset"
			} else {
				p.Blackhole()
			}
		}
		sleep(ctx, span(n.s.T/5, 2*n.s.T, d.frac))
		for _, p := range n.s.proxies[slot] {
			p.Heal()
		}
		return fmt.Sprintf("client %d, %s", slot, what)
	}, false},
	{"slow", false, func(ctx context.Context, n *nemesis, d draw) string {
		slot := d.target % len(n.s.proxies)
		delay := span(50*time.Millisecond, 400*time.Millisecond, d.frac)
		what := ""
		if d.flip {
			// A link fast but for lost segments: each connection's
			// first request and its reply held back, as a segment sent
			// again, past the keepalive's patience (T/10, or twice
			// TCP's retransmission timeout from the handshake's round
			// trip: about six round trips), connection after
			// connection. On a fast link that is several connections
			// within T.
			delay /= 4
			what = ", first requests held back"
		}
		for _, p := range n.s.proxies[slot] {
			p.SetDelay(delay)
			p.SetJitter(delay / 2)
			if d.flip {
				p.HoldBack(2, 16*delay+n.s.T/3)
			}
		}
		sleep(ctx, span(n.s.T, 3*n.s.T, d.frac))
		for _, p := range n.s.proxies[slot] {
			p.HoldBack(0, 0)
			p.Heal()
		}
		return fmt.Sprintf("client %d, %s%s", slot, delay.Round(time.Millisecond), what)
	}, false},
	{"zklock-stop", false, func(ctx context.Context, n *nemesis, d draw) string {
		pid, ok := n.s.procs.pick(d.target, false)
		if !ok {
			return ""
		}
		syscall.Kill(pid, syscall.SIGSTOP)
		sleep(ctx, span(n.s.T/3, 3*n.s.T/2, d.frac))
		syscall.Kill(pid, syscall.SIGCONT)
		return "zklock pid " + strconv.Itoa(pid)
	}, false},
	{"zklock-kill", false, func(ctx context.Context, n *nemesis, d draw) string {
		pid, ok := n.s.procs.pick(d.target, true)
		if !ok {
			return ""
		}
		syscall.Kill(pid, syscall.SIGKILL)
		return "zklock pid " + strconv.Itoa(pid)
	}, false},
	// An operator deletes the holder's node: a certain loss, and the
	// successor may take the lock at once, so the holder must kill its
	// command's whole group at once. Opt-in: a holder frozen by
	// zklock-stop cannot act on it, and overlaps its successor by design.
	{"delete-holder", false, func(ctx context.Context, n *nemesis, d draw) string {
		return n.deleteHolder(ctx, []string{pathEx, pathMulti}[d.target%2])
	}, true},
	{"cpu", false, func(ctx context.Context, n *nemesis, d draw) string {
		secs := 1 + int(d.frac*3)
		cmd := exec.CommandContext(ctx, "stress-ng", "--cpu", "2", "--timeout", strconv.Itoa(secs)+"s", "--quiet")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Run(); err != nil && ctx.Err() == nil {
			n.s.fail(fmt.Errorf("stress-ng: %w", err))
		}
		return fmt.Sprintf("stress-ng --cpu 2, %ds", secs)
	}, false},
}

// faultNames lists the fault kinds, all of them or those "all" selects.
func faultNames(optIn bool) string {
	var n []string
	for _, f := range faults {
		if optIn || !f.optIn {
			n = append(n, f.name)
		}
	}
	return strings.Join(n, ",")
}

// deleteHolder deletes the node of path's holder, as an operator would.
func (n *nemesis) deleteHolder(ctx context.Context, path string) string {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := zktest.Dial(dctx, n.s.cluster.Addrs())
	if err != nil {
		return ""
	}
	defer conn.Close()
	children, _, err := conn.Children(path)
	if err != nil {
		return ""
	}
	q := recipe.Contenders(children)
	if len(q) == 0 || conn.Delete(path+"/"+q[0].Name, -1) != nil {
		return ""
	}
	return path + "/" + q[0].Name
}

// nemesis injects faults of the chosen kinds at random, overlapping,
// until its context ends, and records each from injection to heal.
type nemesis struct {
	s     *suite
	rng   *rand.Rand
	kinds []string

	mu         sync.Mutex
	memberBusy bool
	backups    int
	backup     map[int]string // each member's latest saved data, by ID
}

func (n *nemesis) run(ctx context.Context) {
	var enabled []fault
	for _, f := range faults {
		for _, k := range n.kinds {
			if f.name == k {
				enabled = append(enabled, f)
			}
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if len(enabled) == 0 {
		<-ctx.Done()
		return
	}
	for {
		gap := time.Duration(300+n.rng.IntN(2200)) * time.Millisecond
		f := enabled[n.rng.IntN(len(enabled))]
		d := draw{target: n.rng.IntN(1 << 20), frac: n.rng.Float64(), flip: n.rng.IntN(2) == 0}
		if !sleep(ctx, gap) {
			return
		}
		if f.member && !n.claimMember() {
			continue // one member out at a time
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.member {
				defer n.releaseMember()
			}
			// The fault runs to its heal even when the run's time is up:
			// the calm after it must begin with everything healed.
			start := mono()
			target := f.inject(context.WithoutCancel(ctx), n, d)
			if target != "" {
				n.s.record(robust.Record{Fault: &robust.Fault{Kind: f.name, Target: target, Start: start, End: mono()}})
			}
		}()
	}
}

func (n *nemesis) claimMember() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.memberBusy {
		return false
	}
	n.memberBusy = true
	return true
}

func (n *nemesis) releaseMember() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.memberBusy = false
}

func (n *nemesis) member(i int) *zktest.Server { return n.s.cluster.Server(i % n.s.cluster.Len()) }

// wipe stops a member and brings it back on an empty data directory, or
// (restore) on the copy the previous wipe of that member saved, older than
// the ensemble's state: either way it must catch up from the leader. The
// state it had is saved first, for the next restore.
func (n *nemesis) wipe(srv *zktest.Server, restore bool) string {
	srv.Stop()
	n.mu.Lock()
	n.backups++
	backup := filepath.Join(n.s.dir, "backups", fmt.Sprintf("server-%d-%d", srv.ID(), n.backups))
	older := n.backup[srv.ID()]
	n.backup[srv.ID()] = backup
	n.mu.Unlock()
	if err := srv.SaveData(backup); err != nil {
		n.s.fail(fmt.Errorf("saving %s: %w", srvName(srv), err))
	}
	what := "wiped"
	from := ""
	if restore && older != "" {
		what, from = "restored from an older copy", older
	}
	if err := srv.RestoreData(from); err != nil {
		n.s.fail(fmt.Errorf("restoring %s: %w", srvName(srv), err))
	}
	if older != "" {
		// Only the latest copy is ever restored: the older ones (up to
		// 2 GB each, with the servers' preallocated logs) filled 20 GB
		// in a 30-minute run.
		os.RemoveAll(older)
	}
	n.restart(srv)
	return srvName(srv) + ", " + what
}

// down stops a member (SIGKILL or SIGTERM), leaves it down for 0.3–2 s
// and restarts it.
func (n *nemesis) down(ctx context.Context, srv *zktest.Server, stop func(*zktest.Server) error, d draw) string {
	stop(srv)
	sleep(ctx, span(300*time.Millisecond, 2*time.Second, d.frac))
	n.restart(srv)
	return srvName(srv)
}

// restart brings a member back and waits until the ensemble serves with a
// leader: the heal is complete only then.
func (n *nemesis) restart(srv *zktest.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := srv.Restart(ctx); err != nil {
		n.s.fail(fmt.Errorf("restart %s: %w", srvName(srv), err))
		return
	}
	if err := n.s.cluster.WaitServing(ctx); err != nil {
		n.s.fail(fmt.Errorf("after restarting %s: %w", srvName(srv), err))
	}
}

func srvName(srv *zktest.Server) string { return "server " + strconv.Itoa(srv.ID()) }

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
