#!/usr/bin/env bash
# Shared helpers for the scripts in this directory. Source it, don't run it:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It only defines variables and functions (plus a PATH fix for Go), so
# sourcing it has no other side effects and the caller keeps control of
# `set -euo pipefail` (every script here sets it before sourcing this).

# Absolute repo root, derived from this file's location so every script works
# no matter which directory it is called from.
ZKLOCK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ZKLOCK_ROOT

# The toolchain lives in /usr/local/go/bin, which a non-login shell (CI runs
# `bash .ci/run` with a trimmed environment) may not have on PATH.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="/usr/local/go/bin:$PATH"
  export PATH
fi

# Where Debian's zookeeper package (and its dependencies) put their jars.
ZK_DEBIAN_JAR_DIR="${ZK_DEBIAN_JAR_DIR:-/usr/share/java}"

# The jars a standalone server needs from Debian's packages, and the JVM
# flags for a quick start: the same lists the Go tests use (internal/testkit/javart).
mapfile -t ZK_DEBIAN_JARS < <(grep -v '^#' "$ZKLOCK_ROOT/internal/testkit/javart/server-jars.txt")
mapfile -t ZK_JVM_STARTUP_FLAGS < <(grep -v '^#' "$ZKLOCK_ROOT/internal/testkit/javart/startup-flags.txt")

# Name used as the prefix of every message, e.g. "zk-local.sh: ...".
_zklock_prog() { basename -- "${0:-zklock-script}"; }

# err MESSAGE... — print "scriptname: message" to stderr.
err() { printf '%s: %s\n' "$(_zklock_prog)" "$*" >&2; }

# die MESSAGE... — err, then exit 1.
die() {
  err "$@"
  exit 1
}

# info MESSAGE... — progress note, on stderr so it never pollutes output that a
# caller may capture.
info() { printf '%s: %s\n' "$(_zklock_prog)" "$*" >&2; }

# zk_find_java — print the java binary to use; fail if there is none.
# JAVA_HOME wins, as it does for ZooKeeper's own zkServer.sh.
zk_find_java() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    printf '%s\n' "$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then
    command -v java
  else
    err "no java found (install a JRE, e.g. Debian's default-jre-headless, or set JAVA_HOME)"
    return 1
  fi
}

# zk_classpath — print the ZooKeeper server classpath; fail if incomplete.
#
# ZOOKEEPER_HOME (an unpacked Apache release) takes precedence over Debian's
# jars so a developer can test against another ZooKeeper version. If it is set
# but holds no ZooKeeper jar we fail instead of silently falling back, since a
# silent fallback would test a different version than the one asked for.
zk_classpath() {
  local -a jars=()
  local j missing=""

  if [[ -n "${ZOOKEEPER_HOME:-}" ]]; then
    shopt -s nullglob
    # 3.5+ tarballs keep everything in lib/; older ones put zookeeper-*.jar at
    # the top level.
    jars=("$ZOOKEEPER_HOME"/lib/*.jar "$ZOOKEEPER_HOME"/*.jar)
    shopt -u nullglob
    local found_zk=""
    for j in "${jars[@]}"; do
      case "$(basename -- "$j")" in
        zookeeper-[0-9]*.jar) found_zk=1 ;;
      esac
    done
    if [[ -z "$found_zk" ]]; then
      err "ZOOKEEPER_HOME=$ZOOKEEPER_HOME has no zookeeper-<version>.jar in lib/ or at its top level"
      return 1
    fi
    # conf/ on the classpath lets the release's logback.xml/log4j.properties
    # configure logging, as zkServer.sh does.
    if [[ -d "$ZOOKEEPER_HOME/conf" ]]; then
      jars+=("$ZOOKEEPER_HOME/conf")
    fi
  else
    for j in "${ZK_DEBIAN_JARS[@]}"; do
      if [[ -r "$ZK_DEBIAN_JAR_DIR/$j.jar" ]]; then
        jars+=("$ZK_DEBIAN_JAR_DIR/$j.jar")
      else
        missing+=" $j.jar"
      fi
    done
    if [[ -n "$missing" ]]; then
      err "ZooKeeper jars missing from $ZK_DEBIAN_JAR_DIR:$missing (run scripts/install-deps.sh, or set ZOOKEEPER_HOME)"
      return 1
    fi
  fi

  local IFS=:
  printf '%s\n' "${jars[*]}"
}

# zk_ruok PORT — succeed if a ZooKeeper on 127.0.0.1:PORT answers "imok".
# Uses bash's /dev/tcp because nc is not guaranteed to exist. Runs in a
# subshell so the socket is closed on return and "connection refused" noise is
# discarded; the read is bounded so a wedged listener cannot hang us.
zk_ruok() {
  local port="$1" reply=""
  reply="$(
    exec 2>/dev/null
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    printf 'ruok' >&3
    # ZooKeeper closes without a newline, so read returns non-zero at EOF even
    # when it got the reply.
    read -r -t 3 r <&3 || true
    printf '%s' "${r:-}"
  )" || return 1
  [[ "$reply" == "imok" ]]
}

# zk_port_open PORT — succeed if anything accepts TCP connections on
# 127.0.0.1:PORT (used to tell "free port" from "port taken by something that
# is not a healthy ZooKeeper").
zk_port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# zk_4lw PORT WORD — print the reply of a four-letter-word command (e.g. srvr).
zk_4lw() {
  local port="$1" word="$2"
  (
    exec 2>/dev/null
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    printf '%s' "$word" >&3
    # The server closes the connection after replying; the per-line timeout
    # caps the wait anyway. The last line has no newline, hence the extra test.
    local line=""
    while IFS= read -r -t 3 line <&3; do printf '%s\n' "$line"; done
    if [[ -n "$line" ]]; then printf '%s\n' "$line"; fi
  )
}

# zk_ready PORT — succeed once the server on 127.0.0.1:PORT can serve clients.
# "imok" alone is not enough: ZooKeeper answers it as soon as the port is open,
# while "srvr" still says "not currently serving requests" until the database
# is loaded, and a client connecting in that window is turned away.
zk_ready() {
  zk_ruok "$1" || return 1
  local first=""
  first="$(zk_4lw "$1" srvr | head -n 1)" || true
  [[ "$first" == "Zookeeper version:"* ]]
}
