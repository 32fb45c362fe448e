//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/zklock/zklock/internal/testkit/robust"
)

// minSessionTimeout is the servers' own floor, two ticks of the harness's
// 200 ms: a lower maxSessionTimeout would not start.
const minSessionTimeout = 400 * time.Millisecond

// renegotiate composes what the renegotiated-timeout deadlines (3e84bef)
// are for: a holder lives through a rolling restart that lowers
// maxSessionTimeout to T/3, so that its session resumes with the lowered
// timeout, and is then cut off (silent) for 1–2 T. The servers expire its
// session on the lowered timeout and its successor runs: the holder must
// have counted its deadlines with that timeout, not with the T it asked
// for. The long workload's first worker is the holder; without that
// workload there is no one to cut off. A second rolling restart puts the
// default back, so that the rest of the run has T again.
func (n *nemesis) renegotiate(ctx context.Context, d draw) string {
	slot, ok := n.s.slots["long"]
	if !ok {
		return ""
	}
	lowered := max(n.s.T/3, minSessionTimeout)
	n.roll(strconv.FormatInt(lowered.Milliseconds(), 10))
	cut := span(n.s.T, 2*n.s.T, d.frac)
	for _, p := range n.s.proxies[slot] {
		p.Blackhole()
	}
	sleep(ctx, cut)
	for _, p := range n.s.proxies[slot] {
		p.Heal()
	}
	n.roll("")
	return fmt.Sprintf("maxSessionTimeout %s, client %d cut off for %s", lowered, slot, cut.Round(time.Millisecond))
}

// roll restarts every member in turn with maxSessionTimeout set to value
// ("" for the default).
func (n *nemesis) roll(value string) {
	for _, srv := range n.s.cluster.Servers() {
		srv.SetConfig("maxSessionTimeout", value)
		n.restart(srv)
	}
}

// longJob: worker 0 holds /robust/long for 4–6 T, long enough to live
// through a rolling restart, and worker 1 waits behind it with short
// holds. The renegotiate fault cuts worker 0 off once the restart has
// lowered its session timeout: its successor then runs as soon as the
// lowered timeout expires the session, and worker 0 must have stopped its
// command by then.
func longJob(w int, rng *rand.Rand, s *suite) job {
	hold := 20*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
	if w == 0 {
		hold = 4*s.T + time.Duration(rng.Int64N(int64(2*s.T)))
	}
	return job{args: runArgs(s, "run", "--path", pathLong), paths: []string{pathLong}, role: robust.Holder,
		locks: []string{s.kernel(pathLong, "ex")}, hold: hold, hard: w == 0 && rng.IntN(2) == 0}
}
