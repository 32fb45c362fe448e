#!/usr/bin/env bash
# Measure what is left of the lock-loss margin on a loaded host, and print
# the table of docs/guide/lock-loss.md ("On a loaded host").
#
#   scripts/margin.sh [RUNS]     RUNS handoffs a cell (default 3)
#
# For each session timeout in ZKLOCK_MARGIN_TS (default "2s 4s 10s") and
# each load in ZKLOCK_MARGIN_LOADS (default "none cpu:4 cpu:16 cpu:32
# mem"), it runs the e2e driver BenchmarkLossMargin: a holder whose
# command ignores SIGTERM is cut off from its server with a waiter queued
# behind, RUNS times, under stress-ng started once the server runs
# (cpu:N: N CPU hogs; mem: four workers touching 1.5 GiB each). Each cell
# says the smallest gap between the lost holder's last sign of life and
# the waiter's start, the overlaps the kernel lock or the timestamps
# found, and how many lost holders reported a possible overlap. Every
# stress-ng run is bounded by --timeout and stopped with its cell.
#
# It loads the host on purpose (up to 32 CPU hogs and 6 GiB touched): run
# it where that is allowed. A cell takes about (RUNS + 1) × (T + 4 s) and
# a server's start.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"
runs="${1:-3}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$runs'"
command -v stress-ng >/dev/null || die "stress-ng is not installed (scripts/install-deps.sh)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/zklock-margin.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/e2e.test" ./e2e
echo "| T | load | runs | smallest gap | overlaps | possible overlap reported |"
echo "|---|---|---|---|---|---|"
for t in ${ZKLOCK_MARGIN_TS:-2s 4s 10s}; do
  for load in ${ZKLOCK_MARGIN_LOADS:-none cpu:4 cpu:16 cpu:32 mem}; do
    l="$load"
    [[ "$l" == none ]] && l=""
    log="$tmp/$t-$load.log"
    # -test.benchtime Nx runs N iterations after a first one of 1: the
    # metrics are those of the N.
    if ! (cd e2e && ZKLOCK_MARGIN_T="$t" ZKLOCK_MARGIN_LOAD="$l" "$tmp/e2e.test" \
      -test.run '^$' -test.bench '^BenchmarkLossMargin$' -test.benchtime "${runs}x" -test.v) >"$log" 2>&1; then
      err "T = $t, load $load failed; its log:"
      cat "$log" >&2
      echo "| $t | $load | $runs | failed | | |"
      continue
    fi
    awk -v t="$t" -v load="$load" -v runs="$runs" '
      /^BenchmarkLossMargin/ {
        for (i = 1; i <= NF; i++) {
          if ($(i+1) == "min-gap-ms") gap = $i
          if ($(i+1) == "overlaps") over = $i
          if ($(i+1) == "late-reports") late = $i
        }
      }
      END { printf "| %s | %s | %s | %s ms | %s | %s |\n", t, load, runs, gap, over, late }' "$log"
  done
done
