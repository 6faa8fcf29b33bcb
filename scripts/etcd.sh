#!/usr/bin/env bash
# scripts/etcd.sh: a throwaway single-member etcd (3.4) for tests, tracked by its pid.
#
#   scripts/etcd.sh start   DIR         start etcd on two free loopback ports; prints the client endpoint
#   scripts/etcd.sh stop    DIR [--purge]  TERM (then KILL after a bound) the recorded pid; --purge also
#                                       removes the data dir and the files this script wrote in DIR
#   scripts/etcd.sh kill    DIR         SIGKILL the recorded pid (keeps data dir and ports: for fault tests)
#   scripts/etcd.sh restart DIR         SIGKILL if running, then start again on the same data dir and ports
#   scripts/etcd.sh status  DIR         exit 0 and print the endpoint when running, else exit 1
#
# Files in DIR: etcd.pid, endpoint (http://127.0.0.1:PORT), ports ("CLIENT PEER"), datadir (path of the
# data dir, a fresh mktemp -d under DIR), etcd.log (stdout+stderr of etcd, appended across restarts),
# watchdog.pid (only with WC_ETCD_OWNER_PID).
#
# Knobs (environment; deliberately NOT named ETCD_*, which etcd itself would read as flags):
#   WC_ETCD_PROGRESS_NOTIFY_INTERVAL  periodic watch progress notifications (default 1s; etcd's own is 10m)
#   WC_ETCD_HEARTBEAT_MS / WC_ETCD_ELECTION_MS   raft timers (default 10 / 100: fast, for functional tests)
#   WC_ETCD_READY_TIMEOUT_S           readiness bound (default 30)
#   WC_ETCD_STOP_TIMEOUT_S            TERM -> KILL bound for stop (default 10)
#   WC_ETCD_LOG_LEVEL                 zap log level (default warn)
#   WC_ETCD_OWNER_PID                 if set, a watchdog SIGKILLs etcd once that process is gone, so a
#                                     crashed test run leaves nothing running
#
# Never uses systemd, fixed ports or names: only the pid recorded at start is ever signalled.
set -euo pipefail

die() { echo "etcd.sh: $*" >&2; exit 1; }

usage() {
  sed -n '2,9p' "$0" >&2
  exit 2
}

[[ $# -ge 2 ]] || usage
CMD=$1
DIR=$2
shift 2

PROGRESS_INTERVAL=${WC_ETCD_PROGRESS_NOTIFY_INTERVAL:-1s}
HEARTBEAT_MS=${WC_ETCD_HEARTBEAT_MS:-10}
ELECTION_MS=${WC_ETCD_ELECTION_MS:-100}
READY_TIMEOUT_S=${WC_ETCD_READY_TIMEOUT_S:-30}
STOP_TIMEOUT_S=${WC_ETCD_STOP_TIMEOUT_S:-10}
LOG_LEVEL=${WC_ETCD_LOG_LEVEL:-warn}

if [[ -d "$DIR" ]]; then DIR=$(cd "$DIR" && pwd); fi
PIDFILE="$DIR/etcd.pid"
LOG="$DIR/etcd.log"

# True when $1 is a live process whose command is etcd (guards against a recycled pid).
is_etcd_pid() {
  local pid=$1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  local comm
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || echo '')
  # Right after launch the pid may still be `setsid`/`env` (about to exec etcd).
  [[ "$comm" == etcd || "$comm" == setsid || "$comm" == env ]]
}

recorded_pid() {
  [[ -f "$PIDFILE" ]] && cat "$PIDFILE" || echo ''
}

# Two distinct free loopback ports: bind both to port 0 at once, read them, release them.
pick_ports() {
  if command -v node >/dev/null 2>&1; then
    node -e '
      const net = require("net");
      const a = net.createServer(), b = net.createServer();
      a.listen(0, "127.0.0.1", () => b.listen(0, "127.0.0.1", () => {
        console.log(a.address().port + " " + b.address().port);
        a.close(); b.close();
      }));'
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c '
import socket
a = socket.socket(); a.bind(("127.0.0.1", 0))
b = socket.socket(); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])
a.close(); b.close()'
  else
    die "need node or python3 to pick free ports"
  fi
}

# Launch etcd in the background on $CPORT/$PPORT with data dir $DATA; sets PID.
launch() {
  local token="wc-$$-$RANDOM-$1"
  # etcd reads every ETCD_* variable as a flag (and exits on a clash): scrub them all but
  # ETCD_UNSUPPORTED_ARCH. ETCDCTL_* would likewise steer etcdctl.
  local -a scrub=()
  local v
  for v in $(compgen -e); do
    if [[ ( "$v" == ETCD_* && "$v" != ETCD_UNSUPPORTED_ARCH ) || "$v" == ETCDCTL_* ]]; then
      scrub+=(-u "$v")
    fi
  done
  local -a arch=()
  case "$(uname -m)" in
    aarch64 | arm64) arch=(ETCD_UNSUPPORTED_ARCH=arm64) ;;
  esac
  echo "=== $(date -u +%FT%TZ) etcd.sh launch (ports $CPORT/$PPORT, data $DATA) ===" >>"$LOG"
  # In a non-interactive shell setsid execs (we are not a group leader), and env execs etcd:
  # $! is etcd's own pid.
  setsid env "${scrub[@]}" "${arch[@]}" etcd \
    --name wc --data-dir "$DATA" \
    --listen-client-urls "http://127.0.0.1:$CPORT" --advertise-client-urls "http://127.0.0.1:$CPORT" \
    --listen-peer-urls "http://127.0.0.1:$PPORT" --initial-advertise-peer-urls "http://127.0.0.1:$PPORT" \
    --initial-cluster "wc=http://127.0.0.1:$PPORT" --initial-cluster-state new \
    --initial-cluster-token "$token" \
    --heartbeat-interval "$HEARTBEAT_MS" --election-timeout "$ELECTION_MS" \
    --logger zap --log-outputs stderr --log-level "$LOG_LEVEL" \
    --experimental-watch-progress-notify-interval "$PROGRESS_INTERVAL" \
    </dev/null >>"$LOG" 2>&1 &
  PID=$!
  echo "$PID" >"$PIDFILE"
}

# Poll etcdctl endpoint health every 50 ms; 0 = healthy, 1 = etcd exited, 2 = timed out.
wait_ready() {
  local endpoint="http://127.0.0.1:$CPORT"
  local deadline=$((SECONDS + READY_TIMEOUT_S))
  while ((SECONDS < deadline)); do
    if ! kill -0 "$PID" 2>/dev/null; then
      return 1
    fi
    if env -u ETCDCTL_ENDPOINTS ETCDCTL_API=3 etcdctl --endpoints="$endpoint" \
      --dial-timeout=300ms --command-timeout=300ms endpoint health >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.05
  done
  return 2
}

fail_with_log() {
  echo "etcd.sh: $1" >&2
  echo "--- last lines of $LOG ---" >&2
  tail -n 30 "$LOG" >&2 || true
  exit 1
}

kill_hard() {
  local pid=$1
  is_etcd_pid "$pid" || return 0
  kill -KILL "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  die "pid $pid survived SIGKILL"
}

start_watchdog() {
  [[ -n "${WC_ETCD_OWNER_PID:-}" ]] || return 0
  local wd="$DIR/watchdog.pid"
  if [[ -f "$wd" ]] && kill -0 "$(cat "$wd")" 2>/dev/null; then return 0; fi
  # Re-reads the pid file each round (restart changes the pid); exits once the pid file is gone.
  setsid bash -c '
    owner=$1; pidfile=$2
    while [[ -f "$pidfile" ]] && kill -0 "$owner" 2>/dev/null; do sleep 1; done
    if [[ -f "$pidfile" ]]; then
      pid=$(cat "$pidfile")
      [[ "$(cat /proc/$pid/comm 2>/dev/null)" == etcd ]] && kill -KILL "$pid" 2>/dev/null
    fi
    exit 0' watchdog "$WC_ETCD_OWNER_PID" "$PIDFILE" </dev/null >/dev/null 2>&1 &
  echo $! >"$wd"
}

stop_watchdog() {
  local wd="$DIR/watchdog.pid"
  [[ -f "$wd" ]] || return 0
  local pid
  pid=$(cat "$wd")
  if kill -0 "$pid" 2>/dev/null && grep -q watchdog "/proc/$pid/cmdline" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
  fi
  rm -f "$wd"
}

# start (fresh ports and data dir) or restart (same ones), with up to 3 attempts on a port race.
do_start() {
  local mode=$1
  command -v etcd >/dev/null 2>&1 || die "etcd binary not found (apt-get install etcd-server etcd-client)"
  command -v etcdctl >/dev/null 2>&1 || die "etcdctl binary not found (apt-get install etcd-client)"
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  PIDFILE="$DIR/etcd.pid"
  LOG="$DIR/etcd.log"
  local old
  old=$(recorded_pid)
  if is_etcd_pid "$old"; then
    die "etcd already running in $DIR (pid $old); stop it first"
  fi
  if [[ $mode == restart ]]; then
    [[ -f "$DIR/ports" && -f "$DIR/datadir" ]] || die "nothing to restart in $DIR (no ports/datadir files)"
    read -r CPORT PPORT <"$DIR/ports"
    DATA=$(cat "$DIR/datadir")
    [[ -d "$DATA" ]] || die "data dir $DATA is gone"
  else
    DATA=$(mktemp -d "$DIR/data.XXXXXX")
    echo "$DATA" >"$DIR/datadir"
  fi
  local attempt rc
  for attempt in 1 2 3; do
    if [[ $mode == start ]]; then
      read -r CPORT PPORT < <(pick_ports)
      [[ -n "$CPORT" && -n "$PPORT" && "$CPORT" != "$PPORT" ]] || die "could not pick free ports"
    fi
    echo "$CPORT $PPORT" >"$DIR/ports"
    launch "$attempt"
    rc=0
    wait_ready || rc=$?
    if [[ $rc == 0 ]]; then
      echo "http://127.0.0.1:$CPORT" >"$DIR/endpoint"
      start_watchdog
      echo "http://127.0.0.1:$CPORT"
      return 0
    fi
    if [[ $rc == 2 ]]; then
      kill_hard "$PID"
      rm -f "$PIDFILE"
      fail_with_log "etcd (pid $PID) not healthy after ${READY_TIMEOUT_S}s on http://127.0.0.1:$CPORT"
    fi
    # etcd exited. A port taken in the race window: retry (fresh ports on start; same ports on a restart,
    # where the old process may still hold them for a moment).
    rm -f "$PIDFILE"
    if tail -n 20 "$LOG" | grep -q 'address already in use'; then
      [[ $mode == start ]] && { rm -rf "$DATA"; DATA=$(mktemp -d "$DIR/data.XXXXXX"); echo "$DATA" >"$DIR/datadir"; }
      sleep 0.2
      continue
    fi
    fail_with_log "etcd exited during startup (ports $CPORT/$PPORT)"
  done
  fail_with_log "etcd could not bind its ports after 3 attempts"
}

do_stop() {
  local purge=${1:-}
  local pid
  pid=$(recorded_pid)
  if is_etcd_pid "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    local i n=$((STOP_TIMEOUT_S * 10))
    for ((i = 0; i < n; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "etcd.sh: pid $pid ignored SIGTERM for ${STOP_TIMEOUT_S}s; sending SIGKILL" >&2
      kill_hard "$pid"
    fi
  fi
  rm -f "$PIDFILE"
  stop_watchdog
  if [[ "$purge" == --purge ]]; then
    if [[ -f "$DIR/datadir" ]]; then
      local data
      data=$(cat "$DIR/datadir")
      # Only ever remove a data dir this script created inside DIR.
      [[ "$data" == "$DIR"/data.* ]] && rm -rf "$data"
    fi
    rm -f "$DIR/datadir" "$DIR/endpoint" "$DIR/ports" "$DIR/etcd.log"
  fi
}

case "$CMD" in
  start)
    do_start start
    ;;
  restart)
    mkdir -p "$DIR"
    kill_hard "$(recorded_pid)"
    rm -f "$PIDFILE"
    do_start restart
    ;;
  kill)
    kill_hard "$(recorded_pid)"
    rm -f "$PIDFILE"
    ;;
  stop)
    do_stop "${1:-}"
    ;;
  status)
    pid=$(recorded_pid)
    if is_etcd_pid "$pid"; then
      cat "$DIR/endpoint"
    else
      exit 1
    fi
    ;;
  *)
    usage
    ;;
esac
