#!/usr/bin/env bash
# The robustness suite: crowds of real zklock processes on a few paths
# against a ZooKeeper ensemble on loopback, while a nemesis injects random,
# overlapping faults; the recorded history is then judged by a checker
# (internal/testkit/robust) and a report directory written. See docs/robustness.md.
#
#   scripts/robustness.sh                          # 90 s of faults, a new seed
#   scripts/robustness.sh --seed 42                # replay seed 42's faults
#   scripts/robustness.sh --duration 30m --out DIR # a long run, report in DIR
#   scripts/robustness.sh --workload exclusive,tryrun --faults kill,partition
#   scripts/robustness.sh --servers 5 --session-timeout 2s
#
# The seed is printed first. Exit 0: no violation; 1: violations (the
# report names them, with the history around each); 2: the suite itself
# failed (a server that would not restart, a bad flag).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  echo "usage: $(basename -- "$0") [--duration D] [--seed S] [--workload W,...] [--faults F,...] [--servers 3|5] [--session-timeout T] [--out DIR]" >&2
  exit 2
}

args=()
out=""
while (($#)); do
  case "$1" in
    --duration | --seed | --workload | --faults | --servers | --session-timeout)
      (($# >= 2)) || usage
      args+=("$1" "$2")
      shift
      ;;
    --out)
      (($# >= 2)) || usage
      out="$2"
      shift
      ;;
    *) usage ;;
  esac
  shift
done

cd "$ZKLOCK_ROOT"
bin="$(mktemp -d "${TMPDIR:-/tmp}/zklock-robust-bin.XXXXXX")"
trap 'rm -rf "$bin"' EXIT
# One go build for both: their links run side by side.
go build -o "$bin/" . ./internal/testkit/robust/cmd/zklock-robust
if [[ -z "$out" ]]; then
  out="$(mktemp -d "${TMPDIR:-/tmp}/zklock-robust.XXXXXX")"
fi
"$bin/zklock-robust" --zklock "$bin/zklock" --out "$out" "${args[@]}"
