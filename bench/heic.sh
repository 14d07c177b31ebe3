#!/usr/bin/env bash
# An iPhone's panorama (issue 49): an 8192 × 4096 HEIC's 1024-wide preview made by toursd
# (libheif, decoded whole, area-averaged, JPEG), beside libheif's own heif-convert to PNG then
# a resize to 1024 with Pillow (what nextcloud-like servers run), and toursd's preview of the
# same scene as a JPEG (decoded at 1/8 scale); each a fresh panorama, median of BENCH_ROUNDS (5).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'stop_servers "$work"' EXIT
start_toursd "$work" >/dev/null
.venv/bin/python bench/heic.py "$work" "$TOURSD_PORT" "${BENCH_ROUNDS:-5}"
