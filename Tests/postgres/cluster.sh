#!/usr/bin/env bash
# A PostgreSQL cluster of the tests' own: Debian's postgresql, in a temporary directory, on a
# loopback port the OS picked, run as the postgres user (initdb refuses root), with the C
# locale (text compares byte by byte, as on SQLite) and trust authentication on 127.0.0.1.
#   cluster.sh start DIR   prints the server's URL, postgresql://postgres@127.0.0.1:PORT
#   cluster.sh stop DIR    stops it and removes DIR
#   cluster.sh restart DIR stops it (fast) and starts it again on the same port
#   cluster.sh down DIR    stops it (fast), keeping its data; cluster.sh up DIR starts it again
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# The server outlives this script: it must not keep any descriptor its caller waits on (a
# pipe, or the socket Foundation's Process watches to learn that its child ended).
start_server() {
    (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-p $1 -k $dir -c listen_addresses=127.0.0.1 -c max_connections=1000" start >/dev/null </dev/null
    )
}
command=$1 dir=$2
case "$command" in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres --locale=C -E UTF8 --auth=trust >"$dir/initdb.log" 2>&1
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    echo "$port" > "$dir/port"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/port"
    start_server "$port"
    echo "postgresql://postgres@127.0.0.1:$port"
    ;;
restart)
    port=$(cat "$dir/port")
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
    start_server "$port"
    ;;
down)
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
    ;;
up)
    start_server "$(cat "$dir/port")"
    ;;
stop)
    [ -d "$dir/data" ] && as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: cluster.sh start|stop|restart|down|up DIR" >&2
    exit 2
    ;;
esac
