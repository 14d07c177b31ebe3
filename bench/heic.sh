#!/usr/bin/env bash
# An iPhone's panorama (issue 49): an 8192 × 4096 HEIC's previews made by toursd's processing
# (libheif, decoded whole once, area-averaged to 320, 1024 and 4096, JPEG), beside libheif's own
# heif-convert to PNG then a resize to 1024 with Pillow (what nextcloud-like servers run), and
# toursd's processing of the same scene as a JPEG; each a fresh panorama, median of
# BENCH_ROUNDS (5).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'stop_servers "$work"' EXIT
# Previews only: no tiles, whose cutting would be timed too.
TOURSD_tileMinWidth=1000000 start_toursd "$work" >/dev/null
.venv/bin/python bench/heic.py "$work" "$TOURSD_PORT" "${BENCH_ROUNDS:-5}"
