#!/usr/bin/env bash
# Run a throwaway standalone ZooKeeper on 127.0.0.1 for the demo and for
# trying zklock by hand.
#
#   scripts/zk-local.sh start  [PORT]   start it (or report it already runs)
#   scripts/zk-local.sh status [PORT]   exit 0 if running, 3 if not
#   scripts/zk-local.sh stop   [PORT]   stop it and delete its state
#
# PORT defaults to $ZKLOCK_ZK_PORT, then 2181. State (zoo.cfg, data, log, pid
# file) lives in ${ZKLOCK_ZK_DIR:-${XDG_RUNTIME_DIR:-/tmp}/zklock-zk-PORT}.
# The server is detached from this shell, so it keeps running after the
# script (and the terminal or CI step that ran it) exits.
#
# Environment: ZOOKEEPER_HOME (use an Apache release instead of Debian's
# jars), JAVA_HOME, ZKLOCK_ZK_START_TIMEOUT (seconds to wait for "imok",
# default 30).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  echo "usage: $(basename -- "$0") start|stop|status [PORT]" >&2
  exit 2
}

(($# >= 1 && $# <= 2)) || usage
cmd="$1"
port="${2:-${ZKLOCK_ZK_PORT:-2181}}"
if ! [[ "$port" =~ ^[1-9][0-9]{0,4}$ ]] || ((port > 65535)); then
  die "bad port: $port"
fi

state_dir="${ZKLOCK_ZK_DIR:-${XDG_RUNTIME_DIR:-/tmp}/zklock-zk-$port}"
cfg="$state_dir/zoo.cfg"
data_dir="$state_dir/data"
log="$state_dir/zookeeper.log"
pid_file="$state_dir/zookeeper.pid"
start_timeout="${ZKLOCK_ZK_START_TIMEOUT:-30}"

# The exact command that stops this instance, including ZKLOCK_ZK_DIR when it
# was set, since without it stop would look in the wrong directory.
stop_cmd() {
  local c=""
  if [[ -n "${ZKLOCK_ZK_DIR:-}" ]]; then
    c="ZKLOCK_ZK_DIR=$(printf '%q' "$ZKLOCK_ZK_DIR") "
  fi
  printf '%s%q stop %s\n' "$c" "$ZKLOCK_ROOT/scripts/zk-local.sh" "$port"
}

# pid_is_zk PID — succeed if PID is alive and is a ZooKeeper server. Checking
# the command line, not just liveness, keeps us from killing an unrelated
# process that reused the pid of a server that died long ago.
pid_is_zk() {
  local pid="$1" args=""
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    args="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
  else
    args="$(ps -p "$pid" -o args= 2>/dev/null || true)"
  fi
  [[ "$args" == *org.apache.zookeeper.server.* ]]
}

# our_pid — print the pid from our pid file if that process is our server.
our_pid() {
  local pid=""
  [[ -r "$pid_file" ]] || return 1
  pid="$(<"$pid_file")"
  pid_is_zk "$pid" || return 1
  printf '%s\n' "$pid"
}

zk_version() {
  zk_4lw "$port" srvr | sed -n 's/^Zookeeper version: \([^-,]*\).*/\1/p'
}

print_running() {
  local pid="$1" version
  version="$(zk_version || true)"
  echo "ZooKeeper ${version:-?} is running on 127.0.0.1:$port${pid:+ (pid $pid)}"
  echo "  connect string: 127.0.0.1:$port   (export ZKLOCK_SERVERS=127.0.0.1:$port)"
  if [[ -n "$pid" ]]; then
    echo "  state dir:      $state_dir (log: $log)"
    echo "  stop it with:   $(stop_cmd)"
  else
    echo "  (not started by this script: no live pid file in $state_dir)"
  fi
}

do_status() {
  local pid=""
  pid="$(our_pid || true)"
  if zk_ruok "$port"; then
    print_running "$pid"
    return 0
  fi
  if [[ -n "$pid" ]]; then
    echo "ZooKeeper process $pid exists but 127.0.0.1:$port does not answer imok (starting up, or wedged; log: $log)"
    return 1
  fi
  echo "ZooKeeper is not running on 127.0.0.1:$port"
  return 3
}

do_start() {
  local java cp pid="" deadline=$((SECONDS + start_timeout + 1))
  if zk_ruok "$port"; then
    # Possibly started a moment ago by someone else: give it the same grace
    # period to finish loading before handing it to a client.
    while ! zk_ready "$port" && ((SECONDS < deadline)); do sleep 0.1; done
    echo "already running:"
    print_running "$(our_pid || true)"
    return 0
  fi
  if pid="$(our_pid)"; then
    die "ZooKeeper (pid $pid) from $state_dir runs but does not answer on port $port; see $log, or stop it: $(stop_cmd)"
  fi
  if zk_port_open "$port"; then
    die "127.0.0.1:$port is taken by something that is not a healthy ZooKeeper; pick another port (scripts/zk-local.sh start PORT)"
  fi

  java="$(zk_find_java)" || die "no java; run scripts/install-deps.sh"
  cp="$(zk_classpath)" || die "no ZooKeeper; run scripts/install-deps.sh or set ZOOKEEPER_HOME"

  # Start from empty data every time: this server is for tests and demos, and
  # leftover znodes (old locks) from an earlier run would only confuse them.
  mkdir -p "$state_dir"
  rm -rf "$data_dir"
  mkdir -p "$data_dir"
  rm -f "$pid_file"
  # clientPortAddress keeps the server off the network; the 4lw whitelist lets
  # us (and the tests) ask "ruok"/"srvr"; the admin server would grab port
  # 8080 and clash with anything else there; maxClientCnxns=0 lifts the
  # 60-connections-per-IP cap that concurrent tests all on 127.0.0.1 can hit.
  cat >"$cfg" <<EOF
tickTime=2000
dataDir=$data_dir
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
EOF

  # setsid: own session, so a Ctrl-C or the end of a CI step's process group
  # doesn't take the server down; nohup: ignore SIGHUP when the terminal goes.
  # All three standard fds are redirected so callers that capture our output
  # don't wait for the server to close them.
  # Every other descriptor the caller passed down is closed: a server that
  # outlives this script must not keep the caller's files open, above all a
  # lock (`flock LOCK scripts/zk-local.sh start` would otherwise hold LOCK
  # for as long as the server runs).
  # The small heap and the start-up flags cut start-up time and memory;
  # throughput does not matter for a local server.
  (
    for fd in /dev/fd/*; do
      fd="${fd##*/}"
      if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec setsid nohup "$java" \
      -Xmx256m "${ZK_JVM_STARTUP_FLAGS[@]}" \
      -cp "$cp" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$cfg" \
      </dev/null >>"$log" 2>&1
  ) &
  pid=$!
  # The subshell execs setsid, which is not a process-group leader and so
  # execs in place (no fork), as nohup does: $! is the java process itself.
  echo "$pid" >"$pid_file"

  # Wait until it answers "imok" and serves requests, bounded so a broken
  # install fails instead of hanging.
  while ! zk_ready "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      err "ZooKeeper exited during startup; last lines of $log:"
      tail -n 20 "$log" >&2 || true
      rm -f "$pid_file"
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      err "ZooKeeper did not become ready (imok + serving) on 127.0.0.1:$port within ${start_timeout}s; last lines of $log:"
      tail -n 20 "$log" >&2 || true
      kill "$pid" 2>/dev/null || true
      rm -f "$pid_file"
      exit 1
    fi
    sleep 0.1
  done
  echo "started:"
  print_running "$pid"
}

do_stop() {
  local pid="" i
  if pid="$(our_pid)"; then
    kill "$pid" 2>/dev/null || true
    # Give it 10s to exit cleanly (SIGTERM), then force it.
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      err "pid $pid ignored SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
    fi
    echo "stopped ZooKeeper (pid $pid) on 127.0.0.1:$port"
  elif zk_ruok "$port"; then
    # Not ours (no live pid file here): refuse rather than guess which process
    # to kill. State is kept so nothing belonging to that server is touched.
    die "a ZooKeeper answers on 127.0.0.1:$port but was not started from $state_dir; not stopping it"
  else
    echo "ZooKeeper is not running on 127.0.0.1:$port"
  fi
  # Remove only what we create, then the directory if that left it empty:
  # ZKLOCK_ZK_DIR may point somewhere that holds other files.
  if [[ -d "$state_dir" ]]; then
    rm -rf "$data_dir"
    rm -f "$cfg" "$log" "$pid_file"
    rmdir "$state_dir" 2>/dev/null || err "left $state_dir in place: it holds files this script did not create"
  fi
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) usage ;;
esac
