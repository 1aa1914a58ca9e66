#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks, from Debian's packages.
#   scripts/postgres.sh start DIR [PORT] [MODE]
#                                          initdb into DIR, start on 127.0.0.1:PORT (default 55432;
#                                          `free`: a port nobody listens on, chosen again if another
#                                          process takes it first), print the database URL on
#                                          stdout. MODE (or the
#                                          MEDPANEL_PG_MODE variable) is `fast` (the default, for
#                                          tests: fsync, synchronous_commit and full_page_writes off)
#                                          or `durable` (for benchmarks: PostgreSQL's own defaults,
#                                          every commit flushed to disk as SQLite's synchronous=FULL
#                                          does, plus pg_stat_statements and WAL timing for the
#                                          benchmarks' CPU model)
#   scripts/postgres.sh restart DIR [MODE]  restart the cluster in place (pg_ctl restart -m MODE: fast,
#                                          the default, or immediate), same port and data; for fault tests
#   scripts/postgres.sh standby DIR PORT PRIMARY_PORT [MODE]
#                                          a hot standby (read replica) of the cluster on
#                                          127.0.0.1:PRIMARY_PORT: pg_basebackup into DIR, then start
#                                          it on PORT (or `free`) streaming the primary's WAL; prints the URL of
#                                          its `medpanel` database (read-only). Stop it with `stop`
#   scripts/postgres.sh stop DIR           stop the cluster and remove DIR
# POSTGRES_OPTIONS (e.g. "-c synchronous_commit=on") is added to the server's options at start,
# after the defaults below, so it overrides them.
# initdb refuses to run as root, so under root the cluster belongs to the `postgres` user that
# Debian's package creates. Only loopback connections are accepted, with trust authentication:
# the cluster lives only as long as the run that started it.
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The server settings of a MODE (see start).
settings_for() {
  case "$1" in
    # Sized for a test run on a small machine: durability is not the point of a throwaway cluster.
    fast) echo "-c fsync=off -c synchronous_commit=off -c full_page_writes=off" ;;
    # What a production cluster does on commit (the defaults, spelled out so the log shows them),
    # and the statistics bench/ reads: statement times and how long WAL flushes take.
    durable) echo "-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c shared_preload_libraries=pg_stat_statements -c track_wal_io_timing=on" ;;
    *) echo "postgres.sh: MODE must be fast or durable (got \"$1\")" >&2; exit 2 ;;
  esac
}

# A loopback port nobody listens on right now, as the kernel hands one out.
free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close() })'
}

# launch DIR PORT OPTIONS: start the server of DIR/data on PORT and print the port it listens on.
# With PORT `free`, a port is chosen, and chosen again (up to five times) when another process
# binds it between the choice and the server's start: test suites run side by side on one machine.
launch() {
  local dir=$1 wanted=$2 options=$3 port said _
  for _ in 1 2 3 4 5; do
    port=$wanted
    [ "$wanted" = free ] && port=$(free_port)
    rm -f "$dir/server.log"
    if said=$(as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir $options" start 2>&1); then
      echo "$port"
      return 0
    fi
    [ "$wanted" = free ] && grep -q 'Address already in use' "$dir/server.log" || break
  done
  echo "$said" >&2
  cat "$dir/server.log" >&2
  return 1
}

command=${1:-}
dir=${2:-}
[ -n "$dir" ] || { echo "usage: postgres.sh start|standby|restart|stop DIR [PORT [fast|durable] | PORT PRIMARY_PORT | fast|immediate]" >&2; exit 2; }

case "$command" in
  start)
    port=${3:-55432}
    settings=$(settings_for "${4:-${MEDPANEL_PG_MODE:-fast}}")
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -U medpanel --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(launch "$dir" "$port" "-c max_connections=300 $settings ${POSTGRES_OPTIONS:-}") || exit 1
    as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U medpanel medpanel
    echo "postgres://medpanel@127.0.0.1:$port/medpanel"
    ;;
  standby)
    port=${3:-}
    primary=${4:-}
    [ -n "$port" ] && [ -n "$primary" ] || { echo "usage: postgres.sh standby DIR PORT PRIMARY_PORT [MODE]" >&2; exit 2; }
    settings=$(settings_for "${5:-${MEDPANEL_PG_MODE:-fast}}")
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    # -R writes standby.signal and primary_conninfo: the copy starts as a standby of the primary.
    # initdb's pg_hba.conf already trusts replication connections from loopback. A fast checkpoint
    # starts the copy at once; it is not synced to disk, as nothing here outlives the run.
    as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$primary" -U medpanel -D "$dir/data" -R -X stream --checkpoint=fast --no-sync >"$dir/basebackup.log" 2>&1 ||
      { cat "$dir/basebackup.log" >&2; exit 1; }
    port=$(launch "$dir" "$port" "-c max_connections=300 -c hot_standby=on $settings ${POSTGRES_OPTIONS:-}") || exit 1
    echo "postgres://medpanel@127.0.0.1:$port/medpanel"
    ;;
  restart)
    mode=${3:-fast}
    case "$mode" in fast|immediate|smart) ;; *) echo "postgres.sh: restart mode must be fast, immediate or smart" >&2; exit 2 ;; esac
    # pg_ctl restart reuses the options of the last start (postmaster.opts): same port, same settings.
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "$mode" -w -t 60 restart >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: postgres.sh start|standby|restart|stop DIR [PORT [fast|durable] | PORT PRIMARY_PORT | fast|immediate]" >&2
    exit 2
    ;;
esac
