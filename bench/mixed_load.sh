#!/usr/bin/env bash
# Small requests behind big uploads: GET /healthz and an authenticated GET /v1/properties/{id}
# on 8 connections (wrk -t2 -c8), alone and while 16 clients each upload 50 MB panoramas
# again and again (curl, each upload then deleted so the disk does not fill), beside nginx
# serving a static file alone and while the same 16 clients PUT the same file to its WebDAV
# directory; same run, BENCH_ROUNDS (3) alternating rounds. Each ratio is taken within a round
# (its figures measured minutes apart at most, the order of /healthz and the authenticated read
# swapped from one round to the next), and the median of the rounds' ratios is printed: a
# machine whose speed drifts between rounds moves both sides of a ratio together. Each phase
# starts once the one before is on the disk and processed (settle_toursd).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX) # outside the work tree, on a real disk (not tmpfs)
uploader_pids=()
stop_uploaders() {
    touch "$work/stop"
    [ ${#uploader_pids[@]} -gt 0 ] && wait "${uploader_pids[@]}" 2>/dev/null || true
    uploader_pids=()
    rm -f "$work/stop"
}
trap 'stop_uploaders; stop_servers "$work"' EXIT
uploaders=${MIXED_UPLOADERS:-16}
size_mb=${MIXED_UPLOAD_MB:-50}
rounds=${BENCH_ROUNDS:-3}
export WRK_CONNECTIONS=8 BENCH_SECONDS=${BENCH_SECONDS:-6}

jpeg_like "$((size_mb << 20))" "$work/upload.bin"
nginx_port=$(start_nginx "$work")
start_toursd "$work"
token=$(cat "$work/data/admin.token")
auth="Authorization: Bearer $token"
base="http://127.0.0.1:$TOURSD_PORT"
property=$(cat /proc/sys/kernel/random/uuid)
floor=$(cat /proc/sys/kernel/random/uuid)
curl -fs -o /dev/null -X PUT -H "$auth" -d '{"name":"Bench","floorCount":1,"metadata":{"k":"v"}}' "$base/v1/properties/$property"
curl -fs -o /dev/null -X PUT -H "$auth" -d '{"number":0}' "$base/v1/properties/$property/floors/$floor"

# $uploaders clients uploading until stop_uploaders; each finished upload adds a line to
# $work/uploaded. $1: toursd or nginx.
start_uploaders() {
    : > "$work/uploaded"
    for client in $(seq 1 "$uploaders"); do
        (
            while [ ! -f "$work/stop" ]; do
                if [ "$1" = toursd ]; then
                    id=$(cat /proc/sys/kernel/random/uuid)
                    curl -fsS -o /dev/null -T "$work/upload.bin" -H "$auth" -H "Content-Type: image/jpeg" "$base/v1/panoramas/$id?floorId=$floor" \
                        && echo "$client" >> "$work/uploaded"
                    curl -fsS -o /dev/null -X DELETE -H "$auth" "$base/v1/panoramas/$id" || true
                else
                    curl -fsS -o /dev/null -T "$work/upload.bin" "http://127.0.0.1:$nginx_port/dav/client-$client.jpg" \
                        && echo "$client" >> "$work/uploaded"
                fi
            done
        ) &
        uploader_pids+=($!)
    done
    # Let every client get its first upload under way before measuring.
    sleep 1
}

measure() { # round name url [wrk arguments]: appends "round name RPS P99" to figures
    local round=$1 name=$2 url=$3
    shift 3
    echo "$round $name $(wrk_figures "$url" "$work/wrk-$name.txt" "$@")" >> "$work/figures"
}
measure_toursd() { # round suffix: /healthz and the authenticated read, in the round's order
    if [ $(($1 % 2)) -eq 1 ]; then
        measure "$1" "healthz-$2" "$base/healthz"
        measure "$1" "property-$2" "$base/v1/properties/$property" -H "$auth"
    else
        measure "$1" "property-$2" "$base/v1/properties/$property" -H "$auth"
        measure "$1" "healthz-$2" "$base/healthz"
    fi
}

: > "$work/figures"
: > "$work/throughput"
for round in $(seq 1 "$rounds"); do
    measure "$round" nginx-alone "http://127.0.0.1:$nginx_port/healthz"
    measure_toursd "$round" alone

    start_uploaders nginx
    started=$(date +%s.%N)
    measure "$round" nginx-uploads "http://127.0.0.1:$nginx_port/healthz"
    echo "nginx $(wc -l < "$work/uploaded") $(python3 -c "import time; print(time.time() - $started)")" >> "$work/throughput"
    stop_uploaders
    settle_toursd

    start_uploaders toursd
    started=$(date +%s.%N)
    measure_toursd "$round" uploads
    echo "toursd $(wc -l < "$work/uploaded") $(python3 -c "import time; print(time.time() - $started)")" >> "$work/throughput"
    stop_uploaders
    settle_toursd
done
rss=$(peak_rss_mb "$TOURSD_PID")

python3 - "$work/figures" "$work/throughput" "$uploaders" "$size_mb" "$rounds" "$rss" <<'PY'
import statistics, sys
from collections import defaultdict
rounds = defaultdict(dict)  # round -> name -> (rps, p99)
for line in open(sys.argv[1]):
    round, name, rps, p99 = line.split()
    rounds[round][name] = (float(rps), float(p99))
def median(f):
    return statistics.median(f(r) for r in rounds.values())
def rate(name): return median(lambda r: r[name][0])
def p99(name): return median(lambda r: r[name][1])
moved = defaultdict(float)
for line in open(sys.argv[2]):
    server, count, seconds = line.split()
    moved[server] += int(count) * int(sys.argv[4]) / float(seconds) / int(sys.argv[5])
uploaders, size = sys.argv[3], sys.argv[4]
print(f"Small GETs on 8 connections (wrk -t2 -c8), alone and while {uploaders} clients upload {size} MB files, same run, "
      f"{sys.argv[5]} alternating rounds: medians, each ratio the median of the rounds' own")
print(f"  {'':<38}{'alone':>18}{'under uploads':>20}{'kept':>8}")
print(f"  {'':<38}{'req/s    p99 ms':>18}{'req/s    p99 ms':>20}")
rows = [("nginx static file (uploads: DAV PUT)", "nginx"), ("toursd GET /healthz", "healthz"), ("toursd GET /v1/properties/{id}, token", "property")]
for label, key in rows:
    kept = median(lambda r: r[f"{key}-uploads"][0] / r[f"{key}-alone"][0])
    print(f"  {label:<38}{rate(key + '-alone'):>9.0f}{p99(key + '-alone'):>9.2f}{rate(key + '-uploads'):>11.0f}{p99(key + '-uploads'):>9.2f}{kept:>7.2f}x")
for key, label in (("healthz", "/healthz"), ("property", "authenticated read")):
    against_nginx = median(lambda r: r[f"{key}-uploads"][1] / r["nginx-uploads"][1])
    kept = median(lambda r: r[f"{key}-uploads"][0] / r[f"{key}-alone"][0])
    print(f"  toursd {label}: p99 under the uploads {against_nginx:.2f}x nginx's (target <= 1.00x); "
          f"req/s under the uploads {kept:.2f}x alone (target >= 0.50x)")
each = [r["property-alone"][0] / r["healthz-alone"][0] for r in rounds.values()]
print(f"  authenticated read / healthz, alone: {statistics.median(each):.2f}x (target >= 0.45x; rounds {', '.join(f'{x:.2f}' for x in each)})")
print(f"  uploads meanwhile: nginx {moved['nginx']:.0f} MB/s (nothing fsynced), toursd {moved['toursd']:.0f} MB/s (each hashed and fsynced)")
print(f"  toursd peak RSS: {float(sys.argv[6]):.1f} MB")
PY
