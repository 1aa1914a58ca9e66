#!/usr/bin/env bash
# A throwaway high-availability PostgreSQL formation for the failover drill and its test, from
# Debian's pg_auto_failover packages (pg-auto-failover-cli, postgresql-15-auto-failover): one
# monitor and two nodes on 127.0.0.1, with synchronous replication.
#   scripts/pg-formation.sh start DIR   create the monitor and the nodes under DIR, start them, wait
#                                       for a primary and a synchronous standby; print the store's
#                                       multi-host URL (target_session_attrs=read-write) on stdout
#   scripts/pg-formation.sh state DIR   the monitor's view: pg_autoctl show state
#   scripts/pg-formation.sh kill DIR    kill -9 the primary node (its pg_autoctl keeper and its
#                                       postgres, as a host that dies); print the node's name
#   scripts/pg-formation.sh stop DIR    stop everything under DIR and remove DIR
# Ports are chosen free. pg_autoctl and initdb refuse to run as root: under root everything
# belongs to Debian's `postgres` user, as scripts/postgres.sh does. Trust authentication on
# loopback only: the formation lives as long as the run that made it.
set -euo pipefail

bindir=/usr/lib/postgresql/15/bin
autoctl=$(command -v pg_autoctl || echo /usr/bin/pg_autoctl)
if [ ! -x "$autoctl" ] || [ ! -x "$bindir/pg_ctl" ]; then
  echo "pg-formation.sh: pg_auto_failover is not installed (apt-get install pg-auto-failover-cli postgresql-15-auto-failover)" >&2
  exit 1
fi

command=${1:-}
dir=${2:-}
[ -n "$dir" ] || { echo "usage: pg-formation.sh start|state|kill|stop DIR" >&2; exit 2; }
dir=$(realpath -m "$dir")

as_owner() {
  # Each pg_autoctl keeps its configuration and state under XDG_CONFIG_HOME / XDG_DATA_HOME: here,
  # inside DIR, so formations of parallel runs never meet.
  local env=(env "XDG_CONFIG_HOME=$dir/xdg/config" "XDG_DATA_HOME=$dir/xdg/data" "PG_CONFIG=$bindir/pg_config" "PATH=$bindir:$PATH")
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "${env[@]}" "$@"; else "${env[@]}" "$@"; fi
}

free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close() })'
}

# run NAME: start `pg_autoctl run` for DIR/NAME in the background, in a session of its own whose
# id (the pg_autoctl process's) goes to DIR/NAME.pid: its services and postgres are in that group.
run() {
  local name=$1 pid="" _
  as_owner setsid "$autoctl" run --pgdata "$dir/$name" >>"$dir/$name.log" 2>&1 &
  for _ in $(seq 1 100); do
    pid=$(pgrep -f -x "$autoctl run --pgdata $dir/$name" || true)
    [ -n "$pid" ] && break
    sleep 0.05
  done
  echo "$pid" >"$dir/$name.pid"
}

monitor_url() { cat "$dir/monitor.url"; }

psql_monitor() { as_owner "$bindir/psql" -X -qAt "$(monitor_url)" -c "$1"; }

# wait_for SQL: until the monitor's answer to SQL is `t` (up to 120 s).
wait_for() {
  local _
  for _ in $(seq 1 600); do
    [ "$(psql_monitor "$1" 2>/dev/null || true)" = t ] && return 0
    sleep 0.2
  done
  echo "pg-formation.sh: timed out waiting for: $1" >&2
  as_owner "$autoctl" show state --pgdata "$dir/monitor" >&2 || true
  return 1
}

case "$command" in
  start)
    mkdir -p "$dir/xdg"
    [ "$(id -u)" = 0 ] && chown -R postgres: "$dir"
    monitor_port=$(free_port)
    as_owner "$autoctl" create monitor --pgdata "$dir/monitor" --pgctl "$bindir/pg_ctl" --pgport "$monitor_port" \
      --hostname 127.0.0.1 --auth trust --no-ssl >"$dir/monitor.log" 2>&1 || { cat "$dir/monitor.log" >&2; exit 1; }
    echo "postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable" >"$dir/monitor.url"
    run monitor
    wait_for "select true"
    # Failure detection within a few seconds rather than pg_auto_failover's default of about 30 s
    # (health checks every 5 s, unhealthy after 20 s, a 30 s wait for the old primary to demote).
    # Settings of the monitor's database, in milliseconds.
    settings=(health_check_period=1000 health_check_timeout=1000 health_check_max_retries=1 health_check_retry_delay=500
      node_considered_unhealthy_timeout=3000 primary_demote_timeout=5000)
    for setting in "${settings[@]}"; do
      as_owner "$bindir/psql" -X -q -h 127.0.0.1 -p "$monitor_port" -d pg_auto_failover -c "alter system set pgautofailover.${setting%%=*} = ${setting#*=}"
    done
    as_owner "$bindir/psql" -X -q -h 127.0.0.1 -p "$monitor_port" -d pg_auto_failover -c "select pg_reload_conf()" >/dev/null
    # The formation's nodes: one primary and one standby, both in the replication quorum, and the
    # primary waits for one standby's flush before a commit returns.
    ports=()
    for node in node1 node2; do
      port=$(free_port)
      ports+=("$port")
      as_owner "$autoctl" create postgres --pgdata "$dir/$node" --pgctl "$bindir/pg_ctl" --pgport "$port" --name "$node" \
        --hostname 127.0.0.1 --listen 127.0.0.1 --dbname medpanel --monitor "$(monitor_url)" --auth trust --no-ssl \
        --candidate-priority 50 --replication-quorum true >"$dir/$node.log" 2>&1 || { cat "$dir/$node.log" >&2; exit 1; }
      run "$node"
      if [ "$node" = node1 ]; then wait_for "select count(*) = 1 from pgautofailover.node where reportedstate = 'single'"; fi
    done
    wait_for "select count(*) = 1 from pgautofailover.node where reportedstate = 'primary' and goalstate = 'primary'"
    wait_for "select count(*) = 1 from pgautofailover.node where reportedstate = 'secondary' and goalstate = 'secondary'"
    echo "postgres://postgres@127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}/medpanel?target_session_attrs=read-write"
    ;;
  state)
    as_owner "$autoctl" show state --pgdata "$dir/monitor"
    ;;
  kill)
    primary=$(psql_monitor "select nodename from pgautofailover.node where reportedstate in ('primary', 'wait_primary', 'single') limit 1")
    [ -n "$primary" ] || { echo "pg-formation.sh: no primary to kill" >&2; exit 1; }
    keeper=$(cat "$dir/$primary.pid")
    postmaster=$(head -1 "$dir/$primary/postmaster.pid" 2>/dev/null || true)
    # The keeper's process group (setsid) holds its supervisor and children; postgres last.
    kill -9 -- "-$keeper" 2>/dev/null || true
    [ -n "$postmaster" ] && kill -9 "$postmaster" 2>/dev/null || true
    echo "$primary"
    ;;
  stop)
    for name in node1 node2 monitor; do
      if [ -f "$dir/$name.pid" ]; then kill -TERM -- "-$(cat "$dir/$name.pid")" 2>/dev/null || true; fi
    done
    for name in node1 node2 monitor; do
      if [ -f "$dir/$name/postmaster.pid" ]; then as_owner "$bindir/pg_ctl" -D "$dir/$name" -m immediate -w stop >/dev/null 2>&1 || true; fi
      if [ -f "$dir/$name.pid" ]; then kill -9 -- "-$(cat "$dir/$name.pid")" 2>/dev/null || true; fi
    done
    rm -rf "$dir"
    ;;
  *)
    echo "usage: pg-formation.sh start|state|kill|stop DIR" >&2
    exit 2
    ;;
esac
