#!/usr/bin/env bash
# JSON documents at the speed of the socket (issue 17): with 20,000 properties in the store,
# GET /v1/tours/{tourId} of a floor with 30 rooms and 200 panoramas, and the first page of
# 50 properties, each timed at the client over one keep-alive connection (median of 300);
# beside nginx serving the same bytes as a static file, in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'stop_servers "$work"' EXIT
nginx_port=$(start_nginx "$work")
start_toursd "$work"
python3 bench/documents.py "$TOURSD_PORT" "$(cat "$work/data/admin.token")" "$nginx_port" "$work/nginx/html"
