#!/usr/bin/env bash
# A private PostgreSQL server for the mirror's tests and demo: initdb + pg_ctl on a Unix socket in
# a directory of the caller's choosing, its own port, no TCP, no system service touched.
#   private-postgres.sh start DIR PORT   creates the cluster in DIR/data if needed, starts it
#                                        (socket DIR/.s.PGSQL.PORT, superuser postgres, trust auth)
#   private-postgres.sh stop DIR [MODE]  stops it (MODE: fast, the default, or immediate)
#   private-postgres.sh check            exits 0 when the PostgreSQL binaries are installed
# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user.
set -euo pipefail
BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -n "$BIN" ] && [ -x "$BIN/initdb" ] || { echo "private-postgres: PostgreSQL binaries not found (apt-get install postgresql)" >&2; exit 3; }
command=${1:?usage: private-postgres.sh start DIR PORT | stop DIR [MODE] | check}
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case $command in
check) exit 0 ;;
start)
    dir=${2:?directory}; port=${3:?port}
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    chmod 755 "$dir"
    cd "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
    fi
    as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -p $port -c listen_addresses='' -c fsync=on -c max_connections=100" start >/dev/null
    ;;
stop)
    dir=${2:?directory}
    cd "$dir"
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m "${3:-fast}" -w -t 60 stop >/dev/null
    ;;
*) echo "private-postgres: unknown command $command" >&2; exit 2 ;;
esac
