#!/usr/bin/env bash
# Install what the tests and the demo need beyond the Go toolchain.
#
# Idempotent: it installs only what is missing, so test.sh and demo.sh can run
# it every time at almost no cost. A fresh machine has none of these, and
# nothing installed by hand survives a move to a new machine, so this script
# is the one place the project's system dependencies are written down.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Debian packages the project needs, one per line. Add later needs here, e.g.
#   python3-kazoo              # cross-client interop tests
#   libcurator-recipes-java    # Curator lock-recipe interop tests
#   etcd-server etcd-client    # etcd backend
DEB_PACKAGES=(
  etcd-server # scripts/bench.sh: the etcd server behind the `etcdctl lock` peer
  etcd-client # scripts/bench.sh: etcdctl, the `etcdctl lock` peer itself
  libcurator-recipes-java # internal/testkit/peers: Curator 5 lock recipes (+ framework, client, Guava, SLF4J jars)
  python3-kazoo # internal/testkit/peers: Kazoo lock recipes for Debian's /usr/bin/python3
  default-jdk-headless # internal/testkit/peers: javac, to build the Curator runner
  krb5-kdc # internal/testkit/zktest: a throwaway MIT KDC (krb5kdc, kdb5_util) for the Kerberos tests
  krb5-admin-server # internal/testkit/zktest: kadmin.local, to add principals and export keytabs
  krb5-user # internal/testkit/zktest and the Kerberos tests: kinit, to fill a ticket cache
  man-db # internal/manpages and scripts/package-test.sh: man renders the generated pages
  groff-base # internal/manpages: groff -ww checks the pages format without a warning
  bash-completion # scripts/package-test.sh: loads the packaged completion as a login shell would
  procps # e2e: ps, to prove no secret reaches a process's command line (not in a minimal Debian)
  faketime # e2e: libfaketime sets one ensemble member's clock off, for --once-per under clock skew
  prometheus # e2e: promtool checks the --metrics-file output and the exporter's rules; a real prometheus scrapes zklock exporter
  prometheus-node-exporter # e2e: a real node_exporter serves the --metrics-file through its textfile collector
  systemd # e2e: systemd-analyze verify checks the documented unit (no systemd need run)
  python3 # e2e: a daemon that sends its own notifications to NOTIFY_SOCKET
  qemu-user-static # scripts/test.sh: lockexec's tests for linux/arm64 (registered by scripts/qemu-binfmt.sh)
  stress-ng # scripts/robustness.sh: the nemesis starves the CPU with a bounded stress-ng burst
)

# ZooKeeper server for the integration tests and the demo (pulls in a JRE).
# Skipped when a usable classpath already exists, e.g. from ZOOKEEPER_HOME.
if ! zk_classpath >/dev/null 2>&1; then
  DEB_PACKAGES+=(zookeeper)
elif ! zk_find_java >/dev/null 2>&1; then
  # ZooKeeper jars without a JRE (ZOOKEEPER_HOME on a bare machine).
  DEB_PACKAGES+=(default-jre-headless)
fi

# `go test -race` needs cgo, hence a C compiler.
if ! command -v "$(go env CC 2>/dev/null || echo gcc)" >/dev/null 2>&1; then
  DEB_PACKAGES+=(gcc)
fi

# Print the requirements for systems without apt, then fail: we cannot
# install anything there, and carrying on would only fail later, less clearly.
non_debian() {
  err "cannot install packages here (no apt-get/dpkg). Please provide:"
  err "  - Apache ZooKeeper >= 3.5.3 (unpack a release and set ZOOKEEPER_HOME to it)"
  err "  - a Java runtime (java on PATH, or JAVA_HOME)"
  err "  - a C compiler (go test -race needs cgo)"
  err "  - for the interop tests: Apache Curator 5 jars (with Guava and SLF4J), a JDK (javac), Python 3 with Kazoo"
  err "  - for scripts/bench.sh: etcd and etcdctl"
  err "  missing here, as Debian package names: ${*:-none}"
  exit 1
}

# is_installed PKG — "dpkg -s" exits 0 for removed-but-not-purged packages
# too, so check the status line rather than the exit code.
is_installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

if ((${#DEB_PACKAGES[@]} == 0)); then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
  non_debian "${DEB_PACKAGES[@]}"
fi

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  # Installed but still unusable (e.g. a broken ZOOKEEPER_HOME): say why.
  zk_classpath >/dev/null
  exit 0
fi

# apt needs root; use sudo when it is there rather than failing outright.
sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to install: ${missing[*]}"
  sudo=(sudo)
fi

info "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Update first: a fresh machine's package lists may be empty or stale.
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

# Check the result rather than trusting apt's exit code alone: the scripts
# that follow need a complete classpath and a java binary.
zk_classpath >/dev/null || die "ZooKeeper jars still incomplete after installing ${missing[*]}"
zk_find_java >/dev/null || die "no java after installing ${missing[*]}"
info "done"
