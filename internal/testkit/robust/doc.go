// Package robust is the robustness suite's history and its checker.
//
// A run of the suite (internal/testkit/robust/cmd/zklock-robust, driven by
// scripts/robustness.sh) starts crowds of real zklock processes on a few
// paths while a nemesis injects faults, and records a History: every
// zklock run from its start to its exit, every command's first and last
// sign of life, the fencing tokens it was given, and every fault from its
// start to its heal. Check then judges the history after the fact, on
// nothing but what was recorded, so that a history saved from a failed run
// can be judged again, and a checker change tried on old histories.
//
// Two detectors judge mutual exclusion, independently: the kernel lock
// each command takes without waiting (flock(2) with LOCK_NB, shared for a
// reader, one of Limit slots for a semaphore), which fails at once when a
// predecessor's process tree still holds it; and the recorded lifetimes,
// from each command's first to its last sign of life, grandchildren
// included. Times are CLOCK_MONOTONIC nanoseconds on the one host every
// process of a run shares, so two processes' times compare directly.
package robust
