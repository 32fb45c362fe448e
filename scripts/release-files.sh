#!/usr/bin/env bash
# Make the files a release ships beside the binary, into build/:
#
#   scripts/release-files.sh [VERSION]
#
#   build/man/zklock*.1.gz       man pages, generated from the command tree
#   build/completions/zklock.bash, _zklock, zklock.fish
#
# .goreleaser.yaml runs it as a `before` hook. The completions come from
# running zklock itself, so they complete what this very source accepts; the
# pages are gzipped without a name or a time stamp (gzip -n), so that two
# builds of the same source give the same packages.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"

version="${1:-dev}"
ldflags="-X github.com/zklock/zklock/cmd.version=$version"

rm -rf build/man build/completions
mkdir -p build/man build/completions

go run -ldflags "$ldflags" ./internal/manpages build/man
gzip -9n build/man/*.1

# The host's own build, only to print the scripts (they are the same for
# every target).
go build -ldflags "$ldflags" -o build/zklock-host .
build/zklock-host completion bash >build/completions/zklock.bash
build/zklock-host completion zsh >build/completions/_zklock
build/zklock-host completion fish >build/completions/zklock.fish
rm build/zklock-host
