#!/usr/bin/env bash
# The restore drill (Tests/postgres/restore_drill.py) on a PostgreSQL cluster and a moto
# bucket of its own, with the release toursd.
#   restore_drill.sh TOURSD
set -euo pipefail
cd "$(dirname "$0")/../.."
toursd=${1:-.build/release/toursd}
work=$(mktemp -d /tmp/toursd-restore.XXXXXX)
chmod 755 "$work" # the postgres user runs the cluster inside
cleanup() {
    local status=$?
    if [ "$status" != 0 ]; then
        for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- the end of $log"; tail -n 15 "$log"; }; done
    fi
    [ -d "$work/s3" ] && bash Tests/s3/store.sh stop "$work/s3"
    bash Tests/postgres/cluster.sh stop "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT
server=$(bash Tests/postgres/cluster.sh start "$work/pg")
mkdir -p "$work/s3"
export $(bash Tests/s3/store.sh start moto "$work/s3")
.venv/bin/python Tests/postgres/restore_drill.py "$toursd" "$work" "$server"
