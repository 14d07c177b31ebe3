#!/usr/bin/env bash
# Requests per second and p99 latency of a /healthz-sized answer: toursd beside nginx
# (own config, 127.0.0.1, a static file as big as toursd's /healthz body), with wrk
# -t2 -c64 in the same run, and toursd's peak RSS. The two servers take turns for
# BENCH_ROUNDS rounds (3) and the medians are printed: on 2 shared cores one run is noise.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT

nginx_port=$(start_nginx "$work")
start_toursd "$work"

rounds=${BENCH_ROUNDS:-3}
: > "$work/nginx.figures"
: > "$work/toursd.figures"
for _ in $(seq 1 "$rounds"); do
    wrk_figures "http://127.0.0.1:$nginx_port/healthz" "$work/wrk-nginx.txt" >> "$work/nginx.figures"
    wrk_figures "http://127.0.0.1:$TOURSD_PORT/healthz" "$work/wrk-toursd.txt" >> "$work/toursd.figures"
done
rss=$(peak_rss_mb "$TOURSD_PID")

python3 - "$work/nginx.figures" "$work/toursd.figures" "$rss" "$(nginx -v 2>&1 | sed 's/.*\///')" "$rounds" <<'PY'
import statistics, sys
def medians(path):
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
nginx_rps, nginx_p99 = medians(sys.argv[1])
toursd_rps, toursd_p99 = medians(sys.argv[2])
rss, version, rounds = float(sys.argv[3]), sys.argv[4], sys.argv[5]
print(f"GET /healthz (15-byte body), wrk -t2 -c64, same run, median of {rounds} alternating rounds")
print(f"  {'server':<16}{'req/s':>10}{'p99 ms':>10}")
print(f"  {'nginx ' + version:<16}{nginx_rps:>10.0f}{nginx_p99:>10.2f}")
print(f"  {'toursd':<16}{toursd_rps:>10.0f}{toursd_p99:>10.2f}")
print(f"  ratio toursd/nginx: req/s {toursd_rps / nginx_rps:.2f}x (target >= 1.30x), "
      f"p99 {toursd_p99 / nginx_p99:.2f}x (target <= 1.00x)")
print(f"  toursd peak RSS: {rss:.1f} MB (target < 32 MB)")
PY
