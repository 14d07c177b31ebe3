#!/usr/bin/env bash
# 2,000 idle and slowloris connections (within maxConnections and the descriptor limit, which
# this raises as make run does) while one client keeps working: its latencies beside its own
# with no crowd, from the same run; how many crowd connections the header and idle timeouts
# let go; toursd's peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'stop_servers "$work"' EXIT
crowd=${CROWD:-2000}
seconds=${CROWD_SECONDS:-15}
python3 -c "
import json, sys
config = json.load(open('config/toursd.json'))
config['maxConnections'] = max(config['maxConnections'], $crowd + 256)
config['maxConnectionsPerAddress'] = 0  # the crowd stands for many clients, all on 127.0.0.1
json.dump(config, open('$work/toursd.json', 'w'))"
TOURSD_CONFIG=$work/toursd.json start_toursd "$work"
token=$(cat "$work/data/admin.token")
read -r in_crowd still_open opened let_go alone_p50 alone_p99 alone_failed crowd_p50 crowd_p99 crowd_failed requests \
    < <(python3 bench/slow_clients.py "$TOURSD_PORT" "$token" "$crowd" "$seconds")
rss=$(peak_rss_mb "$TOURSD_PID")
python3 - "$crowd" "$seconds" "$in_crowd" "$still_open" "$opened" "$let_go" "$alone_p50" "$alone_p99" "$alone_failed" \
    "$crowd_p50" "$crowd_p99" "$crowd_failed" "$requests" "$rss" <<'PY'
import sys
crowd, seconds = int(sys.argv[1]), float(sys.argv[2])
in_crowd, still_open, opened, let_go = map(int, sys.argv[3:7])
alone_p50, alone_p99 = map(float, sys.argv[7:9]); alone_failed = int(sys.argv[9])
crowd_p50, crowd_p99 = map(float, sys.argv[10:12]); crowd_failed, requests = int(sys.argv[12]), int(sys.argv[13])
rss = float(sys.argv[14])
print(f"{crowd} idle and slowloris connections for {seconds:.0f} s, one client working beside them (fresh connection per request)")
print(f"  crowd held open: {in_crowd} at the start, {still_open} at the end; {opened} opened in all, {let_go} let go by the timeouts")
print(f"  working client alone:       p50 {alone_p50:.2f} ms, p99 {alone_p99:.2f} ms, {alone_failed} failed")
print(f"  working client in the crowd: p50 {crowd_p50:.2f} ms, p99 {crowd_p99:.2f} ms ({crowd_p99 / alone_p99:.2f}x alone), "
      f"{crowd_failed} of {requests} failed (target 0)")
print(f"  toursd peak RSS: {rss:.1f} MB (target bounded: < 64 MB)")
sys.exit(1 if crowd_failed else 0)
PY
