#!/usr/bin/env bash
# Interop test: tuspy, a standard tus client from PyPI, uploads to a running toursd.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT
TOURSD_BIN=.build/debug/toursd start_toursd "$work"
port=$TOURSD_PORT
timeout 300 .venv/bin/python Tests/contract/tus_interop.py "http://127.0.0.1:$port" "$(cat "$work/data/admin.token")"
