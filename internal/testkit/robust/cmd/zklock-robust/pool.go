//go:build linux

package main

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/testkit/robust"
)

// poolMembers are the pool workload's members: fewer than its workers
// want at once, so that runs queue for them.
var poolMembers = []string{"a", "b", "c"}

// poolJob is a crowd on one pool: `run --resources a,b,c`, one run in
// three with `--take 2`, and the last worker a tryrun storm. Which
// members a run holds is zklock's choice, so the hold command locks the
// kernel file of each member ZKLOCK_RESOURCES names (hold --pool), and
// the checker judges each member by what the commands were told.
func poolJob(w int, rng *rand.Rand, s *suite) job {
	take := 1
	if rng.IntN(3) == 0 {
		take = 2
	}
	flags := []string{"--path", pathPool, "--resources", strings.Join(poolMembers, ","), "--take", strconv.Itoa(take)}
	j := job{paths: []string{pathPool}, role: robust.Holder, pool: s.kernelFile(pathPool), take: take}
	if w == 3 {
		j.args = append([]string{"tryrun"}, flags...)
		j.hold = time.Duration(rng.IntN(100)) * time.Millisecond
		j.pause = time.Duration(50+rng.IntN(200)) * time.Millisecond
		return j
	}
	j.args = runArgs(s, "run", flags...)
	j.hold, j.hard = holdTime(rng, s.T), rng.IntN(4) == 0
	return j
}
