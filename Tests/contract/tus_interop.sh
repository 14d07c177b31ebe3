#!/usr/bin/env bash
# Interop test: tuspy, a standard tus client from PyPI, uploads to a running toursd.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
# TOURSD_URL and TOURSD_TOKEN: against toursd already running there (several behind a
# balancer, Tests/postgres/scaleout.sh); else a debug toursd of the test's own.
if [ -z "${TOURSD_URL:-}" ]; then
    work=$(mktemp -d)
    trap 'stop_servers "$work"' EXIT
    TOURSD_BIN=.build/debug/toursd start_toursd "$work"
    TOURSD_URL="http://127.0.0.1:$TOURSD_PORT" TOURSD_TOKEN=$(cat "$work/data/admin.token")
fi
timeout 300 .venv/bin/python Tests/contract/tus_interop.py "$TOURSD_URL" "$TOURSD_TOKEN"
