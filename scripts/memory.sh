#!/usr/bin/env bash
# Measure what waiting zklocks cost in memory, per process: a waiter is one
# zklock process; the one next in line has started its watchdog (zklock's
# own executable in watchdog mode) as well, so that the handoff does not
# wait for it. scripts/bench.sh measures the same over 1,000 waiters.
#
#   scripts/memory.sh [WAITERS]     default 100
#
# It starts a throwaway ZooKeeper (scripts/zk-local.sh) on a free port, one
# holder and WAITERS waiters on one lock path, waits until every waiter is
# queued, then reads /proc/PID/status and /proc/PID/smaps_rollup of each.
# VmRSS counts every resident page, including the executable's pages that
# all zklock processes share through the page cache; RssAnon and
# Private_Dirty are what a process has to itself; Pss shares the shared
# pages out fairly and so adds up across processes to what the host really
# spends.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"
waiters="${1:-100}"
port=$((20000 + RANDOM % 20000))
export ZKLOCK_ZK_DIR
ZKLOCK_ZK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zklock-mem.XXXXXX")"
bin="$ZKLOCK_ZK_DIR/zklock"
go build -o "$bin" .
sync # the new binary's pages would count as dirty until written back
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/zk-local.sh stop "$port" >/dev/null 2>&1 || true
}
trap cleanup EXIT
scripts/zk-local.sh start "$port" >/dev/null
export ZKLOCK_SERVERS="127.0.0.1:$port"
"$bin" run --path /mem -- sleep 600 2>/dev/null &
pids+=($!)
# The holder first: a waiter that got in ahead of it would take the lock,
# run `true` and leave, and never be counted as waiting.
for ((s = 0; s < 100; s++)); do
  "$bin" list --path /mem --json 2>/dev/null | grep -q '"holding"' && break
  sleep 0.1
done
for ((i = 0; i < waiters; i++)); do
  "$bin" run --path /mem -- true 2>>"$ZKLOCK_ZK_DIR/waiters.err" &
  pids+=($!)
done
for ((s = 0; s < 360; s++)); do
  n=$("$bin" list --path /mem --json | grep -o '"position"' | wc -l || true)
  ((n >= waiters + 1)) && break
  sleep 0.5
done
((n >= waiters + 1)) || die "only $n of $((waiters + 1)) contenders queued: $(sort "$ZKLOCK_ZK_DIR/waiters.err" | uniq -c | head -3)"
sleep 1 # let the watchdogs of the last ones start
# kib FIELD FILE: a "Field:   N kB" line's number.
kib() { awk -v f="$1:" '$1 == f { print $2 }' "$2"; }
report() {
  local what=$1
  shift
  printf '%s\n' "$@" | awk -v what="$what" '
    { rss += $1; anon += $2; pss += $3; priv += $4; n++ }
    END { printf "%-10s %4d processes, per process: VmRSS %.1f MiB, RssAnon %.1f MiB, Pss %.1f MiB, Private_Dirty %.2f MiB\n",
          what, n, rss / n / 1024, anon / n / 1024, pss / n / 1024, priv / n / 1024 }'
}
zk=() wd=()
for p in "${pids[@]:1}"; do
  zk+=("$(kib VmRSS /proc/$p/status) $(kib RssAnon /proc/$p/status) $(kib Pss /proc/$p/smaps_rollup) $(kib Private_Dirty /proc/$p/smaps_rollup)")
  for c in $(cat /proc/$p/task/*/children 2>/dev/null); do
    if tr '\0' '\n' < /proc/$c/environ 2>/dev/null | grep -qx 'ZKLOCK_INTERNAL_WATCHDOG=1'; then
      wd+=("$(kib VmRSS /proc/$c/status) $(kib RssAnon /proc/$c/status) $(kib Pss /proc/$c/smaps_rollup) $(kib Private_Dirty /proc/$c/smaps_rollup)")
    fi
  done
done
echo "$waiters waiters queued on one lock, $(go env GOOS)/$(go env GOARCH), $(go version | awk '{print $3}')"
report zklock "${zk[@]}"
((${#wd[@]} > 0)) && report watchdog "${wd[@]}"
