#!/usr/bin/env bash
# Show zklock doing its job, from a fresh machine, in one command:
#
#   scripts/demo.sh
#
# It installs what is missing, builds bin/zklock, starts (or reuses) a local
# ZooKeeper on 127.0.0.1:${ZKLOCK_ZK_PORT:-2181}, then runs two jobs that
# compete for one lock and shows that the second waits for the first. The
# ZooKeeper is left running so you can keep experimenting; the last lines say
# how to stop it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"

port="${ZKLOCK_ZK_PORT:-2181}"
lock_path=/demo/nightly-report
zklock="$ZKLOCK_ROOT/bin/zklock"
# Each job prints when it starts and ends, so the output proves the ordering.
# The $(date) is for the job's sh to expand, hence single quotes.
# shellcheck disable=SC2016
job_a='echo "A: start $(date +%T.%N)"; sleep 3; echo "A: done  $(date +%T.%N)"'
# shellcheck disable=SC2016
job_b='echo "B: start $(date +%T.%N)"; sleep 3; echo "B: done  $(date +%T.%N)"'

section() { printf '\n=== %s\n' "$*"; }
# show CMD... — echo a command the way a user would type it, then run it.
show() {
  local line="$*"
  printf '$ %s\n' "${line//"$zklock"/zklock}"
  "$@"
}

tmp="$(mktemp -d "${TMPDIR:-/tmp}/zklock-demo.XXXXXX")"
pid_a=""
pid_b=""
# On any exit, stop jobs we started that are still running (e.g. after a
# failed check or Ctrl-C) so no stray lock holder outlives the demo. The
# ZooKeeper server is deliberately not touched.
cleanup() {
  local p
  for p in "$pid_a" "$pid_b"; do
    if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; then kill "$p" 2>/dev/null || true; fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# wait_for DESCRIPTION CHECK... — poll CHECK until it succeeds, for at most
# 10s; a fixed sleep would either waste time or race on a slow machine.
wait_for() {
  local what="$1" deadline=$((SECONDS + 10))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || die "timed out waiting until $what"
    sleep 0.1
  done
}

# in_queue PID [SUBCOMMAND] — succeed if the zklock process PID has a node in
# the lock's queue, per `zklock holders` (default) or `zklock list`. Matching
# the pid recorded in the node, rather than any entry, keeps a stray lock
# holder from an earlier run from being mistaken for our job.
in_queue() {
  local pid="$1" sub="${2:-holders}" out
  # Captured first: with pipefail, `zklock | grep -q` could report zklock's
  # SIGPIPE instead of grep's match.
  out="$("$zklock" "$sub" --path "$lock_path" --json 2>/dev/null || true)"
  grep -Eq "\"pid\": *$pid([^0-9]|\$)" <<<"$out"
}

# hhmmss_to_s "HH:MM:SS.nnnnnnnnn" — seconds since midnight, for comparing
# the jobs' timestamps.
hhmmss_to_s() { awk -F: '{ printf "%.6f\n", $1 * 3600 + $2 * 60 + $3 }' <<<"$1"; }

section "1. Dependencies (scripts/install-deps.sh)"
scripts/install-deps.sh
echo "ok"

section "2. Build bin/zklock and its watchdog, bin/zklock-watchdog"
show go build -o bin/zklock .
show go build -o bin/zklock-watchdog ./cmd/zklock-watchdog
show "$zklock" version

section "3. Local ZooKeeper on 127.0.0.1:$port"
scripts/zk-local.sh start "$port"
export ZKLOCK_SERVERS="127.0.0.1:$port"

# A holder left by an interrupted earlier run would make the demo misleading.
queue="$("$zklock" list --path "$lock_path" --json 2>/dev/null || true)"
if grep -q '"state"' <<<"$queue"; then
  "$zklock" list --path "$lock_path" || true
  die "$lock_path is already in use (see above); wait for it, or restart ZooKeeper: scripts/zk-local.sh stop $port"
fi

section "4. Job A takes the lock"
echo "\$ zklock run --path $lock_path -- sh -c '$job_a' &"
"$zklock" run --path "$lock_path" -- sh -c "$job_a" >"$tmp/a.out" 2>&1 &
pid_a=$!
wait_for "job A holds $lock_path" in_queue "$pid_a" holders
show "$zklock" holders --path "$lock_path"

section "5. Job B wants the same lock, so it queues behind A"
echo "\$ zklock run --path $lock_path --timeout 30s -- sh -c '$job_b' &"
# --timeout keeps the demo bounded should A never let go.
"$zklock" run --path "$lock_path" --timeout 30s -- sh -c "$job_b" >"$tmp/b.out" 2>&1 &
pid_b=$!
wait_for "job B is queued on $lock_path" in_queue "$pid_b" list
echo "The queue while A runs (A holding, B waiting):"
show "$zklock" list --path "$lock_path"

section "6. tryrun does not wait: it fails with exit status 75 while the lock is busy"
job_c='echo "C: ran (it should not have)"'
echo "\$ zklock tryrun --path $lock_path -- sh -c '$job_c'"
rc=0
"$zklock" tryrun --path "$lock_path" -- sh -c "$job_c" >"$tmp/c.out" 2>&1 || rc=$?
cat "$tmp/c.out"
echo "exit status: $rc"
((rc == 75)) || die "expected tryrun to exit 75 (busy), got $rc"
if grep -q '^C: ran' "$tmp/c.out"; then die "tryrun ran its command although the lock was busy"; fi

section "7. Wait for both jobs"
rc_a=0
rc_b=0
wait "$pid_a" || rc_a=$?
pid_a=""
wait "$pid_b" || rc_b=$?
pid_b=""
echo "job A exited $rc_a, job B exited $rc_b"
echo "--- job A output"
cat "$tmp/a.out"
echo "--- job B output"
cat "$tmp/b.out"
((rc_a == 0 && rc_b == 0)) || die "a job failed (A: $rc_a, B: $rc_b)"

section "8. Result"
a_done="$(sed -n 's/^A: done *//p' "$tmp/a.out")"
b_start="$(sed -n 's/^B: start *//p' "$tmp/b.out")"
[[ -n "$a_done" && -n "$b_start" ]] || die "could not find A's end or B's start in the job output"
gap="$(awk -v a="$(hhmmss_to_s "$a_done")" -v b="$(hhmmss_to_s "$b_start")" \
  'BEGIN { d = b - a; if (d < -43200) d += 86400; printf "%.3f", d }')"
echo "A done at $a_done, B started at $b_start (${gap}s later)"
if awk -v d="$gap" 'BEGIN { exit !(d >= 0) }'; then
  echo "OK: B started only after A had finished: the lock serialized the two jobs."
else
  die "B started before A finished: the lock did not serialize the jobs"
fi

section "ZooKeeper is left running for you to try more"
scripts/zk-local.sh status "$port"
