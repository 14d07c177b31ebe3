#!/usr/bin/env bash
# An S3 store of a test run's own, on a loopback port the OS picks:
#   store.sh start moto|rclone DIR   prints the variables toursd and the tests read (AWS_*)
#   store.sh stop DIR
# moto keeps everything in memory; rclone serves DIR/data (one folder per bucket).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv/bin"
command=$1
case "$command" in
start)
    kind=$2 dir=$3
    mkdir -p "$dir/data"
    key=toursd-test secret=toursd-test-secret
    case "$kind" in
    moto) "$venv/moto_server" -H 127.0.0.1 -p 0 >/dev/null 2>"$dir/log" & ;;
    rclone) "$venv/rclone" serve s3 --addr 127.0.0.1:0 --auth-key "$key,$secret" --config /dev/null "$dir/data" >/dev/null 2>"$dir/log" & ;;
    *) echo "store.sh: moto or rclone, not $kind" >&2; exit 2 ;;
    esac
    echo $! >"$dir/pid"
    for _ in $(seq 1 600); do
        port=$(grep -o 'http://127.0.0.1:[0-9]*' "$dir/log" | head -1 | sed 's/.*://') || true
        if [ -n "$port" ]; then
            echo "AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1"
            exit 0
        fi
        kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
        sleep 0.1
    done
    echo "store.sh: $kind did not start:" >&2
    cat "$dir/log" >&2
    exit 1
    ;;
stop)
    dir=$2
    [ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null || true
    rm -rf "$dir"
    ;;
esac
