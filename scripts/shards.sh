#!/usr/bin/env bash
# Run one test package as several test processes side by side:
#
#   scripts/shards.sh 3 ./e2e -race -count=1 -timeout 30m
#
# The package's tests (as `go test -list` names them) are dealt out in turn
# to N shards, and each shard is the package's test binary run with
# -run '^(its tests)$'. Why processes and not t.Parallel: most end-to-end
# tests wait (for a session to expire, a member to restart, an election),
# and they share a package-level server, a package-level ensemble that some
# of them stop and restart, and the environment. A shard is a process of
# its own, so it has its own server and ensemble, and a test runs beside
# tests of other shards without sharing anything with them but the machine.
# Dealing the tests out in turn, in the order the package declares them
# (file by file), spreads each file's tests, which tend to be alike in
# cost, over the shards; a new test joins a shard with no change here.
#
# Each shard's output goes to a file of its own, printed whole when every
# shard has ended, so that a failure reads as it would from one go test;
# every shard ends with go test's own "ok"/"FAIL" line for the package.
# The exit status is 1 if any shard failed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"

(($# >= 2)) || die "usage: scripts/shards.sh N PACKAGE [go test flags...]"
n="$1"
pkg="$2"
shift 2
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "the number of shards must be a positive integer, not \"$n\""

# The list comes from the same build as the shards (the flags matter: -race
# is another build), so listing costs one build that the shards reuse.
mapfile -t names < <(go test "$@" -list '^(Test|Fuzz|Example)' "$pkg" | grep -E '^(Test|Fuzz|Example)')
((${#names[@]} > 0)) || die "no tests listed in $pkg"

declare -a shard
for i in "${!names[@]}"; do
  s=$((i % n))
  shard[s]+="${shard[s]:+|}${names[i]}"
done

dir="$(mktemp -d "${TMPDIR:-/tmp}/zklock-shards.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
pids=()
for ((s = 0; s < n; s++)); do
  [[ -n "${shard[s]:-}" ]] || continue
  go test "$@" -run "^(${shard[s]})\$" "$pkg" >"$dir/$s" 2>&1 &
  pids[s]=$!
done
rc=0
for s in "${!pids[@]}"; do
  wait "${pids[s]}" || rc=1
done
for s in "${!pids[@]}"; do
  printf -- '--- %s shard %d of %d\n' "$pkg" "$((s + 1))" "$n"
  cat "$dir/$s"
done
exit "$rc"
