#!/usr/bin/env bash
# The tour a buyer walks (issue 50): a share link of the two-floor walk house in headless
# Chromium over a throttled link (10 Mbit/s, 40 ms: Chromium's own network emulation): its
# first frame from a cold cache, and a move to the next panorama in place (the click to its
# first frame) beside a move by page load, as the viewer moved before (that panorama's page
# opened, warm cache, to its first frame); medians of BENCH_ROUNDS (5), in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release toursd
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
.venv/bin/python bench/walk.py .build/release/toursd "$work" "${BENCH_ROUNDS:-5}"
