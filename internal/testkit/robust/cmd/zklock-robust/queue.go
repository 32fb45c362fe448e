//go:build linux

package main

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock/internal/testkit/robust"
)

// orderKeys is the supersede workload's clock of order keys, as a CI
// system numbers its pipelines: each run takes the next, and one in three
// takes a key a little older, as a slow pipeline that arrives late does.
var orderKeys atomic.Int64

// supersedeJob is a deploy queue: `run --supersede --order-key K` of one
// path, so that runs arriving behind a waiter make it leave (or leave
// themselves, with an older key). The hold is holdTime's, so that faults
// hit holders and waiters both.
func supersedeJob(w int, rng *rand.Rand, s *suite) job {
	k := orderKeys.Add(1)
	if rng.IntN(3) == 0 {
		k -= 1 + rng.Int64N(3)
	}
	return job{args: runArgs(s, "run", "--supersede", "--order-key", strconv.FormatInt(k, 10), "--path", pathQueue),
		paths: []string{pathQueue}, role: robust.Holder, locks: []string{s.kernel(pathQueue, "ex")},
		hold: holdTime(rng, s.T), hard: rng.IntN(4) == 0, orderKey: &k,
		pause: time.Duration(rng.IntN(300)) * time.Millisecond}
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
