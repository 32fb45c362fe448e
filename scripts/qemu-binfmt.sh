#!/usr/bin/env bash
# Register qemu-user-static with binfmt_misc for linux/arm64, so that
# arm64 binaries (lockexec's test binary and the helpers it re-executes)
# run on this amd64 machine as if native. Idempotent: does nothing when
# the handler is registered already, or when the machine is arm64.
#
# systemd-binfmt would read Debian's /usr/lib/binfmt.d/qemu-aarch64.conf
# at boot, but CI machines and containers often run no systemd: the same
# line is written to binfmt_misc's register file here, mounting
# binfmt_misc first if need be. Needs root (or sudo).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ "$(uname -m)" == aarch64 ]] && exit 0

conf=/usr/lib/binfmt.d/qemu-aarch64.conf
mnt=/proc/sys/fs/binfmt_misc
[[ -r "$conf" ]] || die "$conf is missing: install qemu-user-static (scripts/install-deps.sh)"

sudo=()
((EUID == 0)) || sudo=(sudo)

if [[ ! -e "$mnt/register" ]]; then
  "${sudo[@]}" mount -t binfmt_misc binfmt_misc "$mnt" ||
    die "cannot mount binfmt_misc on $mnt (a container needs --privileged)"
fi
# The rule's name is the line's first field (:NAME:...).
name="$(cut -d: -f2 "$conf")"
if [[ ! -e "$mnt/$name" ]]; then
  # F (in the conf's flags) opens the interpreter now, so that it also
  # runs in mount namespaces where its path does not exist.
  "${sudo[@]}" sh -c 'cat "$1" > "$2/register"' sh "$conf" "$mnt" ||
    die "cannot register $name with binfmt_misc"
fi
grep -qx enabled "$mnt/$name" || die "binfmt_misc rule $name is registered but disabled"
echo "ok: $name registered with binfmt_misc"
