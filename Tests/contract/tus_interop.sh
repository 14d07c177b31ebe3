#!/usr/bin/env bash
# Interop test: tuspy, a standard tus client from PyPI, uploads to a running toursd.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
work=$(mktemp -d)
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
.build/debug/toursd serve --port 0 --data-dir "$work/data" 2> "$work/toursd.log" &
pid=$!
port=$(toursd_port "$work/toursd.log")
timeout 300 .venv/bin/python Tests/contract/tus_interop.py "http://127.0.0.1:$port" "$(cat "$work/data/admin.token")"
