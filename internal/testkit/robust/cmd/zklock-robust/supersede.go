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
