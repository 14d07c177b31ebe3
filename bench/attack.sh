#!/usr/bin/env bash
# Health under a flood: Tests/attack's drill (1,000 malformed chunked requests, 20,000 upload
# creations, 300 connections pipelining 64 KiB of GET /metrics each) against the release
# toursd, a fresh-connection /healthz every 100 ms throughout; its slowest answer under attack
# beside its slowest before the attacks, same run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release toursd
out=$(bash Tests/attack/run.sh)
slowest=$(sed -n 's/.*slowest \([0-9]*\) ms under attack.*/\1/p' <<< "$out")
echo "A flood and a balancer's health check: /healthz on a fresh connection every 100 ms during Tests/attack's drill"
grep -F '/healthz slowest' <<< "$out" | sed 's/^ */  /'
echo "  slowest under attack: $slowest ms (target < 100 ms)"
