#!/usr/bin/env bash
# Small requests behind big uploads: GET /healthz and an authenticated GET /v1/properties/{id}
# on 8 connections (wrk -t2 -c8), alone and while 16 clients each upload 50 MB panoramas
# again and again (curl, each upload then deleted so the disk does not fill), beside nginx
# serving a static file alone and while the same 16 clients PUT the same file to its WebDAV
# directory; same run, BENCH_ROUNDS (2) alternating rounds, medians printed.
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
rounds=${BENCH_ROUNDS:-2}
export WRK_CONNECTIONS=8 BENCH_SECONDS=${BENCH_SECONDS:-8}

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

measure() { # name url [wrk arguments]: appends "name RPS P99" to figures
    local name=$1 url=$2
    shift 2
    echo "$name $(wrk_figures "$url" "$work/wrk-$name.txt" "$@")" >> "$work/figures"
}

: > "$work/figures"
: > "$work/throughput"
for _ in $(seq 1 "$rounds"); do
    measure nginx-alone "http://127.0.0.1:$nginx_port/healthz"
    measure healthz-alone "$base/healthz"
    measure property-alone "$base/v1/properties/$property" -H "$auth"

    start_uploaders nginx
    started=$(date +%s.%N)
    measure nginx-uploads "http://127.0.0.1:$nginx_port/healthz"
    echo "nginx $(wc -l < "$work/uploaded") $(python3 -c "import time; print(time.time() - $started)")" >> "$work/throughput"
    stop_uploaders

    start_uploaders toursd
    started=$(date +%s.%N)
    measure healthz-uploads "$base/healthz"
    measure property-uploads "$base/v1/properties/$property" -H "$auth"
    echo "toursd $(wc -l < "$work/uploaded") $(python3 -c "import time; print(time.time() - $started)")" >> "$work/throughput"
    stop_uploaders
done
rss=$(peak_rss_mb "$TOURSD_PID")

python3 - "$work/figures" "$work/throughput" "$uploaders" "$size_mb" "$rounds" "$rss" <<'PY'
import statistics, sys
from collections import defaultdict
figures = defaultdict(list)
for line in open(sys.argv[1]):
    name, rps, p99 = line.split()
    figures[name].append((float(rps), float(p99)))
med = {name: (statistics.median(r for r, _ in v), statistics.median(p for _, p in v)) for name, v in figures.items()}
moved = defaultdict(float)
for line in open(sys.argv[2]):
    server, count, seconds = line.split()
    moved[server] += int(count) * int(sys.argv[4]) / float(seconds) / int(sys.argv[5])
uploaders, size = sys.argv[3], sys.argv[4]
print(f"Small GETs on 8 connections (wrk -t2 -c8), alone and while {uploaders} clients upload {size} MB files, same run, median of {sys.argv[5]} rounds")
print(f"  {'':<38}{'alone':>18}{'under uploads':>20}{'kept':>8}")
print(f"  {'':<38}{'req/s    p99 ms':>18}{'req/s    p99 ms':>20}")
rows = [("nginx static file (uploads: DAV PUT)", "nginx"), ("toursd GET /healthz", "healthz"), ("toursd GET /v1/properties/{id}, token", "property")]
for label, key in rows:
    (ra, pa), (ru, pu) = med[f"{key}-alone"], med[f"{key}-uploads"]
    print(f"  {label:<38}{ra:>9.0f}{pa:>9.2f}{ru:>11.0f}{pu:>9.2f}{ru / ra:>7.2f}x")
nginx_p99 = med["nginx-uploads"][1]
for key, label in (("healthz", "/healthz"), ("property", "authenticated read")):
    (ra, _), (ru, pu) = med[f"{key}-alone"], med[f"{key}-uploads"]
    print(f"  toursd {label}: p99 under the uploads {pu / nginx_p99:.2f}x nginx's (target <= 1.00x); "
          f"req/s under the uploads {ru / ra:.2f}x alone (target >= 0.50x)")
print(f"  authenticated read / healthz, alone: {med['property-alone'][0] / med['healthz-alone'][0]:.2f}x (target >= 0.45x)")
print(f"  uploads meanwhile: nginx {moved['nginx']:.0f} MB/s (nothing fsynced), toursd {moved['toursd']:.0f} MB/s (each hashed and fsynced)")
print(f"  toursd peak RSS: {float(sys.argv[6]):.1f} MB")
PY
