#!/usr/bin/env bash
# Build a snapshot .deb with the release tooling, install it on this (Debian)
# machine, check what a user would, and remove it again:
#
#   scripts/package-test.sh
#
# It checks that `zklock --version` runs from /usr/bin, that `man zklock`
# finds the page, that an interactive bash with bash-completion loaded
# completes zklock, and that the zsh and fish scripts and the licence are
# where those shells and Debian look for them. It needs root (dpkg -i) and
# leaves no package installed. It is not part of scripts/test.sh: building
# goreleaser itself takes minutes the first time (see docs/releasing.md).
#
# Only the host's linux target is built, from a copy of .goreleaser.yaml
# narrowed to it, so the check takes seconds once goreleaser is installed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZKLOCK_ROOT"

# The goreleaser version the release is made with; keep equal to the
# comment at the top of .goreleaser.yaml.
GORELEASER_VERSION=v2.16.0

start=$SECONDS
step() { printf '=== %s\n' "$*"; }
fail() {
  err "package test: $*"
  exit 1
}

if [[ $(id -u) -ne 0 ]]; then
  fail "needs root to install the package with dpkg"
fi
scripts/install-deps.sh >/dev/null

goreleaser="$(go env GOPATH)/bin/goreleaser"
have="$("$goreleaser" --version 2>/dev/null || true)"
if ! grep -q "^GitVersion: *$GORELEASER_VERSION\$" <<<"$have"; then
  step "installing goreleaser $GORELEASER_VERSION (minutes, once)"
  GOFLAGS= go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi

arch="$(go env GOARCH)"
work="$(mktemp -d)"
pkg=zklock
cleanup() {
  dpkg -s "$pkg" >/dev/null 2>&1 && dpkg -r "$pkg" >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if dpkg -s "$pkg" >/dev/null 2>&1; then
  fail "a zklock package is already installed here; remove it first (dpkg -r zklock)"
fi

step "goreleaser release --snapshot (linux/$arch only)"
sed -e 's/^\( *goos:\) .*/\1 [linux]/' -e "s/^\\( *goarch:\\) .*/\\1 [$arch]/" .goreleaser.yaml >"$work/goreleaser.yaml"
grep -q "goarch: \\[$arch\\]" "$work/goreleaser.yaml" || fail "could not narrow .goreleaser.yaml's targets"
"$goreleaser" release --snapshot --clean --config "$work/goreleaser.yaml" >"$work/goreleaser.log" 2>&1 ||
  { cat "$work/goreleaser.log" >&2; fail "goreleaser failed"; }

deb="$(ls dist/*.deb)"
archive="$(ls dist/zklock_*_linux_"$arch".tar.gz)"
ls dist/*.rpm >/dev/null || fail "no rpm was built"

step "the archive carries the binary, LICENSE, the docs, the man pages and the completions"
listing="$(tar -tzf "$archive")"
for f in zklock zklock-watchdog LICENSE README.md docs/guide/run.md docs/architecture.md man/man1/zklock.1.gz man/man1/zklock-run.1.gz \
  completions/zklock.bash completions/_zklock completions/zklock.fish; do
  grep -qx "$f" <<<"$listing" || fail "$archive lacks $f"
done

step "dpkg -i $deb"
dpkg -i "$deb" >/dev/null

step "the docs the README links to are installed beside it"
for f in /usr/share/doc/zklock/README.md /usr/share/doc/zklock/docs/guide/run.md; do
  [[ -f "$f" ]] || fail "the package lacks $f"
done

step "zklock --version"
[[ "$(command -v zklock)" == /usr/bin/zklock ]] || fail "zklock is not /usr/bin/zklock"
# zklock starts its watchdog from beside itself.
[[ -x /usr/bin/zklock-watchdog ]] || fail "the package lacks /usr/bin/zklock-watchdog"
version="$(zklock --version)"
echo "$version"
# The snapshot's version, set through the linker, not "dev".
grep -Eq '^zklock [0-9]+\.[0-9]+\.[0-9]+~snapshot ' <<<"$version" || fail "unexpected version line: $version"

step "man zklock"
[[ "$(man -w zklock)" == /usr/share/man/man1/zklock.1.gz ]] || fail "man -w zklock: $(man -w zklock 2>&1)"
page="$(MANPAGER=cat MANWIDTH=100 man zklock 2>&1 | col -b)"
grep -q -- '--servers' <<<"$page" || fail "man zklock lacks --servers"
run_page="$(MANPAGER=cat MANWIDTH=100 man zklock-run 2>&1 | col -b)"
grep -q -- '--timeout' <<<"$run_page" || fail "man zklock-run lacks --timeout"

step "bash completion loads"
# An interactive shell, as a user's: bash-completion's loader finds the
# script in /usr/share/bash-completion/completions on first use.
completion="$(HOME="$work" bash -ic '
  . /usr/share/bash-completion/bash_completion
  __load_completion zklock
  complete -p zklock
  COMP_WORDS=(zklock r); COMP_CWORD=1; COMP_LINE="zklock r"; COMP_POINT=${#COMP_LINE}
  __start_zklock zklock r zklock
  printf "candidates: %s\n" "${COMPREPLY[*]}"' 2>/dev/null)"
echo "$completion"
grep -q '^complete .* zklock$' <<<"$completion" || fail "bash did not load zklock's completion"
grep -q '^candidates: .*\brun\b' <<<"$completion" || fail "bash completion does not offer run"

step "zsh and fish scripts, and the licence"
for f in /usr/share/zsh/vendor-completions/_zklock /usr/share/fish/vendor_completions.d/zklock.fish \
  /usr/share/doc/zklock/copyright; do
  [[ -s "$f" ]] || fail "$f missing or empty"
done

step "dpkg -r zklock"
dpkg -r "$pkg" >/dev/null
[[ ! -e /usr/bin/zklock && ! -e /usr/bin/zklock-watchdog && ! -e /usr/share/man/man1/zklock.1.gz ]] || fail "dpkg -r left files behind"

echo "ok: package test passed in $((SECONDS - start))s"
