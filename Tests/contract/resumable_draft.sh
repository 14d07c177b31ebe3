#!/usr/bin/env bash
# Conformance to the IETF resumable-upload draft (interop versions 3, 5, 6, 7, 8) on raw
# sockets: against a release toursd of the test's own with 104s on, then an upload that
# survives a SIGKILL after its offset was reported (Tests/contract/resumable_draft.py).
# Three daemons behind nginx run the suite in Tests/postgres/scaleout.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT
TOURSD_BIN=${TOURSD_BIN:-.build/release/toursd} start_toursd "$work"
timeout 300 .venv/bin/python Tests/contract/resumable_draft.py suite "http://127.0.0.1:$TOURSD_PORT" "$(cat "$work/data/admin.token")"
timeout 120 .venv/bin/python Tests/contract/resumable_draft.py kill "${TOURSD_BIN:-.build/release/toursd}" "$work/killed"
