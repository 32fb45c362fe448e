#!/usr/bin/env bash
# Measure zklock against its peers in one run and publish docs/benchmarks.md.
#
#   scripts/bench.sh           full run (a few minutes): writes docs/benchmarks.md
#                              and docs/benchmarks/ (results.json, SVG plots, logs)
#   scripts/bench.sh --quick   smoke run of every scenario with small counts
#                              (zklock, the minimal runner, etcdctl and flock;
#                              under a minute of measuring), written to a
#                              temporary directory (docs/ is left alone)
#   scripts/bench.sh --out DIR [--md FILE]   write somewhere else
#
# Peers, all started here on loopback and stopped at the end: flock(1), etcdctl
# lock against a local etcd, and the Kazoo and Curator runners of
# internal/testkit/peers, each on a ZooKeeper started by the Go driver
# (internal/testkit/bench, command internal/testkit/bench/cmd/zklock-bench), and the minimal
# Go runner that the driver builds (internal/testkit/bench/cmd/zklock-min).
# The counts come from BENCH_* environment variables; see internal/testkit/bench/config.go or
# the "Reproduce" section of docs/benchmarks.md. BENCH_MICRO=0 skips the
# lock package's Go micro-benchmarks (skipped by --quick unless BENCH_MICRO=1).
# The servers' and tools' logs go to $BENCH_LOGS (default
# ${TMPDIR:-/tmp}/zklock-bench-logs), not into docs/.
#
# The machine is shared: run it as `flock /tmp/zklock-heavy.lock
# scripts/bench.sh`, and on an idle machine for the numbers to publish.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  echo "usage: $(basename -- "$0") [--quick] [--out DIR] [--md FILE]" >&2
  exit 2
}

quick=""
out=""
md=""
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --out)
      (($# >= 2)) || usage
      out="$2"
      shift
      ;;
    --md)
      (($# >= 2)) || usage
      md="$2"
      shift
      ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
  shift
done

cd "$ZKLOCK_ROOT"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/zklock-bench.XXXXXX")"
driver_pid=""
cleanup() {
  local rc=$?
  # The driver stops its own servers on SIGTERM; its children die with it
  # (parent-death signal) if it cannot.
  if [[ -n "$driver_pid" ]] && kill -0 "$driver_pid" 2>/dev/null; then
    kill -TERM "$driver_pid" 2>/dev/null || true
    wait "$driver_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -n "$quick" ]]; then
  out="${out:-${TMPDIR:-/tmp}/zklock-bench-quick}"
  md="${md:-$out/benchmarks.md}"
else
  out="${out:-docs/benchmarks}"
  md="${md:-docs/benchmarks.md}"
fi
logs="${BENCH_LOGS:-${TMPDIR:-/tmp}/zklock-bench-logs}"
mkdir -p "$out" "$(dirname -- "$md")"

info "installing dependencies (scripts/install-deps.sh)"
"$ZKLOCK_ROOT/scripts/install-deps.sh"

info "building zklock and the driver"
# zklock is built the way .goreleaser.yaml builds releases (static, no cgo),
# so the numbers are those of the binary users run. A plain `go build`
# (cgo, dynamically linked) is timed too, uncontended only, for comparison.
zklock_build="CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' (as .goreleaser.yaml)"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/zklock" .
# Its watchdog beside it, as the packages install it (both zklock builds
# find it there).
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/zklock-watchdog" ./cmd/zklock-watchdog
go build -o "$tmp/zklock-cgo" .
go build -o "$tmp/zklock-bench" ./internal/testkit/bench/cmd/zklock-bench
# The handoff probe: a static C program that prints the time, as `date +%s%N`
# does, with less start-up of its own. Without a C compiler and a static libc
# the driver falls back to date, and the report says so.
stamp_args=()
cc="$(go env CC)"
if "${cc:-cc}" -O2 -static -o "$tmp/stamp" internal/testkit/bench/stamp/stamp.c 2>"$tmp/stamp.err"; then
  stamp_args=(-stamp "$tmp/stamp")
else
  info "cannot build internal/testkit/bench/stamp/stamp.c ($(head -n 1 "$tmp/stamp.err")); the handoff probe is date"
fi

repro="scripts/bench.sh${quick:+ --quick}"
for v in $(env | sed -n 's/^\(BENCH_[A-Z_]*\)=.*/\1/p' | sort -r); do
  [[ "$v" == BENCH_LOGS ]] && continue
  repro="$v=$(printf '%q' "${!v}") $repro"
done

args=(run -zklock "$tmp/zklock" -zklock-build "$zklock_build" -zklock-cgo "$tmp/zklock-cgo"
  -out "$out" -logs "$logs" -md "$md" -repro "$repro" "${stamp_args[@]}")
[[ -n "$quick" ]] && args+=(-quick)

micro_default=1
[[ -n "$quick" ]] && micro_default=0
if [[ "${BENCH_MICRO:-$micro_default}" != 0 ]]; then
  info "Go micro-benchmarks of the lock package"
  benchtime=1s
  [[ -n "$quick" ]] && benchtime=100ms
  go test -run '^$' -bench . -benchmem -benchtime "$benchtime" ./internal/recipe >"$tmp/microbench.txt" 2>&1 ||
    { cat "$tmp/microbench.txt" >&2; die "the lock package's micro-benchmarks failed"; }
  args+=(-micro "$tmp/microbench.txt")
fi

info "measuring (logs in $logs)"
# In the background so that the trap can stop it; `wait` returns early on a
# signal, and the trap then takes over.
"$tmp/zklock-bench" "${args[@]}" &
driver_pid=$!
wait "$driver_pid"
driver_pid=""

info "wrote $md and $out/"
