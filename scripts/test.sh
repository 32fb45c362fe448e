#!/usr/bin/env bash
# Run the whole suite, as CI does, on a fresh machine or a used one:
#
#   scripts/test.sh                       # everything
#   scripts/test.sh -run TestX ./internal/recipe     # extra args go to `go test`
#
# Stages: system dependencies, tracked files, gofmt, go vet, staticcheck,
# the fast lane (go test -short: no server, no JVM), go test -race, lockexec
# again for linux/arm64 under qemu-user, the robustness lane (90 s of random
# faults), then a few seconds of each fuzz target (the fast lane, arm64, the
# robustness lane and fuzzing only when the whole suite runs). The
# integration tests start their own ZooKeeper; if they cannot, they fail,
# and this script deliberately has no switch that would turn that into a
# skip: a green run must mean the locking was exercised against a real
# server.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"

start=$SECONDS
stage() { printf '\n=== %s\n' "$*"; }

stage "dependencies (scripts/install-deps.sh)"
scripts/install-deps.sh
# Fail here, with a clear message, rather than in every integration test.
zk_find_java >/dev/null
zk_classpath >/dev/null
echo "ok: java and ZooKeeper jars present"

# Nothing a build makes belongs in git: a test binary or a release archive
# committed by mistake is the usual culprit, and every such file is large.
stage "tracked files under 1 MiB"
big="$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$1 > 1048576 {print "  " $0}')"
if [[ -n "$big" ]]; then
  err "tracked files over 1 MiB (bytes, path; build output does not belong in git):"
  printf '%s\n' "$big" >&2
  exit 1
fi
echo "ok: no tracked file over 1 MiB"

stage "gofmt -l ."
unformatted="$(gofmt -l .)"
if [[ -n "$unformatted" ]]; then
  err "these files need gofmt (run: gofmt -w .):"
  while IFS= read -r f; do printf '  %s\n' "$f"; done <<<"$unformatted" >&2
  exit 1
fi
echo "ok: all Go files formatted"

stage "go vet ./..."
go vet ./...
echo "ok: go vet clean"

# staticcheck at a pinned version, so that a new release's new checks do
# not fail an unchanged tree; raise the version on purpose, and fix what it
# finds. go run fetches and caches it: nothing to install.
staticcheck_version=v0.8.2
stage "staticcheck $staticcheck_version ./..."
go run "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" ./...
echo "ok: staticcheck clean"

# The release also targets macOS (.goreleaser.yaml): what is Linux-only must
# say so with a build tag, and the rest must build and vet there too.
stage "GOOS=darwin go build ./... && GOOS=darwin go vet ./..."
GOOS=darwin go build ./...
GOOS=darwin go vet ./...
echo "ok: builds and vets for darwin"

# The fast lane first: every test that needs no server, in seconds. It must
# start no JVM: java and javac are tripwires here (JAVA_HOME comes first
# when zklock's tests look for java), and the harness panics if a server
# starts under -short anyway. Its time is printed, not judged: the target
# (under 60 s with a warm build cache) belongs to people, not to a test.
if (($# == 0)); then
  stage "go test -short ./... (the fast lane; java and javac are tripwires)"
  tripwire="$(mktemp -d "${TMPDIR:-/tmp}/zklock-nojava.XXXXXX")"
  mkdir "$tripwire/bin"
  for tool in java javac; do
    printf '#!/bin/sh
echo "$0 $*" >>"%s/started"
exit 1
' "$tripwire" >"$tripwire/bin/$tool"
    chmod +x "$tripwire/bin/$tool"
  done
  lane_start=$SECONDS
  JAVA_HOME="$tripwire" PATH="$tripwire/bin:$PATH" go test -short -count=1 ./...
  if [[ -e "$tripwire/started" ]]; then
    err "the fast lane started a JVM:"
    cat "$tripwire/started" >&2
    exit 1
  fi
  rm -rf "$tripwire"
  echo "ok: the fast lane passed in $((SECONDS - lane_start))s and started no JVM"
fi

# Extra arguments pass through; ./... is added only when none of them names
# packages, so `scripts/test.sh -run TestX` still covers every package while
# `scripts/test.sh -run TestX ./internal/recipe` narrows to one.
args=("$@")
have_pkgs=""
for a in "${args[@]}"; do
  case "$a" in
    . | ./* | ../* | github.com/zklock/zklock*) have_pkgs=1 ;;
  esac
done
[[ -n "$have_pkgs" ]] || args+=(./...)

# -p 2: the machines have 2 cores, and each integration package runs its own
# JVM; more parallel packages only add contention and flaky timeouts.
# -count=1: never reuse cached results, since they depend on a live server.
# -timeout 30m: e2e took 16 minutes beside stress-ng --cpu 4; a busy machine
# must not turn a slow package into a panic.
testflags=(-race -count=1 -timeout 30m)
gotest=(go test "${testflags[@]}" -p 2)
log="$(mktemp "${TMPDIR:-/tmp}/zklock-test.XXXXXX")"
trap 'rm -f "$log"' EXIT
rc=0
if (($# == 0)); then
  # The whole suite: e2e, which alone took 16 of this stage's 20 minutes,
  # runs as ZKLOCK_E2E_SHARDS test processes (3 unless set;
  # scripts/shards.sh says why processes) beside the other packages. Its
  # tests mostly wait, so the shards overlap well on 2 cores. Each shard
  # runs one test at a time, so at most one e2e test per shard and two
  # other packages have servers running at once.
  e2e_shards="${ZKLOCK_E2E_SHARDS:-3}"
  mapfile -t others < <(go list ./... | grep -v '^github.com/zklock/zklock/e2e$')
  stage "${gotest[*]} ./... (./e2e as $e2e_shards shards beside the rest)"
  shardlog="$(mktemp "${TMPDIR:-/tmp}/zklock-e2e.XXXXXX")"
  trap 'rm -f "$log" "$shardlog"' EXIT
  scripts/shards.sh "$e2e_shards" ./e2e "${testflags[@]}" >"$shardlog" 2>&1 &
  shards=$!
  "${gotest[@]}" "${others[@]}" 2>&1 | tee "$log" || rc=$?
  wait "$shards" || rc=1
  tee -a "$log" <"$shardlog"
else
  stage "${gotest[*]} ${args[*]}"
  "${gotest[@]}" "${args[@]}" 2>&1 | tee "$log" || rc=$?
fi

# Releases ship linux/arm64 too, and lockexec is where the platform shows
# (process groups, the watchdog, signals): its tests run again as arm64
# binaries under qemu-user, which binfmt_misc starts for them and for the
# helpers they re-execute (scripts/qemu-binfmt.sh). Without -race: the race
# detector needs cgo and an arm64 C toolchain. Only with the whole suite.
if ((rc == 0 && $# == 0)); then
  stage "GOARCH=arm64 go test ./lockexec (under qemu-user)"
  scripts/qemu-binfmt.sh
  GOARCH=arm64 CGO_ENABLED=0 go test -count=1 ./lockexec 2>&1 | tee -a "$log" || rc=$?
fi

# The robustness lane, 90 s in all on a loaded 2-core machine: 30 s of
# random faults with a fixed seed at T = 2 s, their heals and the calm the
# progress check needs (24 s), judged by the checker; docs/robustness.md.
# Every fault kind but the ones that restart every member (rolling,
# renegotiate, skew), which take longer than the lane alone. Like fuzzing,
# after the main run and only when the whole suite runs, since it keeps the
# machine busy. Every workload but pool, which took the lane to 111 s.
robust_seed=20261562
robust_args=(--duration 30s --session-timeout 2s --seed "$robust_seed"
  --workload exclusive,tryrun,shared,limit,multi,once,reentry,revoke,supersede,long
  --faults kill,kill-leader,term,freeze,wipe,isolate,partition,slow,zklock-stop,zklock-kill,cpu)
if ((rc == 0 && $# == 0)); then
  stage "scripts/robustness.sh ${robust_args[*]}"
  if ! scripts/robustness.sh "${robust_args[@]}"; then
    err "the robustness lane failed: replay with scripts/robustness.sh ${robust_args[*]}"
    rc=1
  fi
fi

# Fuzz each target for a short fixed number of inputs, one after the other
# and only after the main run: fuzzing keeps every core busy, and the
# suite's timing tests must not share the machine with it. A count rather
# than a duration: when a duration runs out while a worker is in the middle
# of an input, go test can report "context deadline exceeded" as a failure
# on a loaded machine. A failure leaves the input under the package's
# testdata/fuzz; fix the bug and make the input a regular test case.
# Skipped when the arguments narrow the run to some tests.
fuzzed=0
fuzzfail=0
if ((rc == 0 && $# == 0)); then
  fuzztime="${ZKLOCK_FUZZTIME:-20000x}"
  while IFS=: read -r file target; do
    pkg="$(dirname "$file")"
    stage "go test -run '^\$' -fuzz '^$target\$' -fuzztime $fuzztime $pkg"
    if go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -parallel 1 "$pkg" </dev/null; then
      fuzzed=$((fuzzed + 1))
    else
      fuzzfail=$((fuzzfail + 1))
      rc=1
    fi
  done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's/:func /:/' | sort)
fi

# Package-level tally from go test's own result lines ("ok  pkg",
# "FAIL pkg", "?   pkg [no test files]").
ok=$(grep -c '^ok ' "$log" || true)
failed=$(grep -Ec '^FAIL[[:space:]]+[^[:space:]]' "$log" || true)
notests=$(grep -c '^?.*\[no test files\]' "$log" || true)
elapsed=$((SECONDS - start))

echo
if ((rc == 0)); then
  echo "test.sh: PASS: gofmt ok, vet ok, go test: $ok packages ok, $notests without tests, $fuzzed fuzz targets ok (${elapsed}s)"
else
  echo "test.sh: FAIL: exit $rc: $ok packages ok, $failed failed, $notests without tests, $fuzzfail fuzz targets failed (${elapsed}s)"
fi
exit "$rc"
