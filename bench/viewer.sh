#!/usr/bin/env bash
# The tour viewer (issue 15): the floor page of a floor with 30 rooms and 200 panoramas, and
# previews of an 8192 × 4096 JPEG, made and then served from their cache; each beside its
# reference measured in the same run (nginx serving the same bytes as a static file; Pillow
# making the same preview with libjpeg-turbo's DCT scaling).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'stop_servers "$work"' EXIT
nginx_port=$(start_nginx "$work")
start_toursd "$work"
.venv/bin/python bench/viewer.py "$TOURSD_PORT" "$(cat "$work/data/admin.token")" "$nginx_port" "$work/nginx/html" "$work/data"
