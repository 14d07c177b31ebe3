#!/usr/bin/env bash
# First, tus PATCHes of 5 MiB and 512 KiB beside their floor (bench/patches.py) on a quiet disk.
# Then upload throughput: one 50 MB upload and 32 concurrent 50 MB uploads, toursd's one-shot
# panorama PUT (hashed, fsynced, renamed, committed) beside the durable reference (bench/
# DurableReceiver: the least a server must do to acknowledge an upload durably) and nginx's
# WebDAV PUT (which neither hashes nor fsyncs), all into the same disk, with curl in the same
# run; toursd's memory under them and their processing. Then PUT /v1/properties requests per
# second with 64 connections beside nginx PUTting the same JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX) # outside the work tree, on a real disk (not tmpfs)
reference_pid=
trap '[ -n "$reference_pid" ] && kill "$reference_pid"; stop_servers "$work"' EXIT
size_mb=${UPLOAD_MB:-50}
concurrent=${UPLOAD_CONCURRENCY:-32}

build_release toursd DurableReceiver
jpeg_like "$((size_mb << 20))" "$work/upload.bin"
rounds=${UPLOAD_ROUNDS:-4}

# tus PATCHes in the sizes clients send (TUSKit's 512 KiB, tus-js-client's and Uppy's 5 MiB)
# beside their floor: the same pieces appended, hashed and fdatasync'ed, on the same disk. First,
# while the disk is quiet: right after the gigabytes the rounds below write (each synced), a
# flush takes up to twice as long for a minute, the floor's and toursd's alike, with nothing
# running. On a daemon of their own, so that the memory figures below start from a fresh one.
mkdir -p "$work/patches"
start_toursd "$work/patches"
patches_token=$(cat "$work/patches/data/admin.token")
patches=$(python3 bench/patches.py "$TOURSD_PORT" "$patches_token" "$(bench_floor "http://127.0.0.1:$TOURSD_PORT" "$patches_token")" \
    "$work/upload.bin" "${PATCH_ROUNDS:-3}")
kill "$TOURSD_PID"
wait "$TOURSD_PID" 2>/dev/null || true

nginx_port=$(start_nginx "$work")
start_toursd "$work"
mkdir -p "$work/reference"
.build/release/DurableReceiver "$work/reference" > "$work/reference.port" &
reference_pid=$!
reference_port=$(port_from_file "$work/reference.port" "the durable reference (DurableReceiver)")
token=$(cat "$work/data/admin.token")
auth="Authorization: Bearer $token"
floor=$(bench_floor "http://127.0.0.1:$TOURSD_PORT" "$token")

# Seconds for the uploads named by ids on stdin, $1 at a time, to URL prefix $2 (each id
# appended, then $3), with extra curl arguments after. Fails on any non-2xx.
timed_uploads() {
    local parallel=$1 prefix=$2 suffix=$3
    shift 3
    local start end
    # Each run starts from a flushed disk: nginx leaves its writes to the kernel's writeback,
    # which would otherwise be paid by whoever runs next.
    sync
    start=$(date +%s.%N)
    if ! xargs -P "$parallel" -I{} curl -fsS -o /dev/null -T "$work/upload.bin" "$@" "$prefix{}$suffix"; then
        echo "bench: an upload to $prefix failed" >&2
        return 1
    fi
    end=$(date +%s.%N)
    python3 -c "print($end - $start)"
}

clear_nginx() { rm -rf "$work/nginx/html/dav"/*; }
toursd_prefix="http://127.0.0.1:$TOURSD_PORT/v1/panoramas/"
toursd_args=(-H "$auth" -H "Content-Type: image/jpeg")

# $1 fresh ids, one per line: every toursd upload is a new panorama.
new_ids() { for _ in $(seq 1 "$1"); do cat /proc/sys/kernel/random/uuid; done; }
fastest() { python3 -c "import sys; print(min(map(float, sys.argv[1:])))" "$@"; }

# Memory first, on the fresh daemon: its peak RSS (VmHWM) once one upload and then 32 at once
# are answered, then its RSS each 0.5 s for 30 s while what they stored is processed (the file
# is no image a decoder reads: its processing makes the placeholder's previews), and how long
# it takes to be back under 40 MB.
idle_rss=$(awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$TOURSD_PID/status")
new_ids 1 | timed_uploads 1 "$toursd_prefix" "?floorId=$floor" "${toursd_args[@]}" > /dev/null
rss_one=$(peak_rss_mb "$TOURSD_PID")
new_ids "$concurrent" | timed_uploads "$concurrent" "$toursd_prefix" "?floorId=$floor" "${toursd_args[@]}" > /dev/null
rss_uploads=$(peak_rss_mb "$TOURSD_PID")
read -r rss_processing rss_back < <(python3 - "$TOURSD_PID" <<'PY'
import sys, time
def rss(kind):
    for line in open(f"/proc/{sys.argv[1]}/status"):
        if line.startswith(kind):
            return int(line.split()[1]) / 1024
start, back = time.monotonic(), None
while time.monotonic() - start < 30:
    if back is None and rss("VmRSS:") < 40:
        back = time.monotonic() - start
    time.sleep(0.5)
print(f"{rss('VmHWM:'):.1f} {'never' if back is None else f'{back:.1f}'}")
PY
)

# Rounds alternate the three servers; each figure is the best round (the disk and the two
# shared cores make single runs noisy). The reference and toursd swap places each round: after
# a few GB written, this virtual disk writes faster for the run right after one whose files
# were deleted than for the run after that (the same two builds alternated, 32 at once:
# 500-670 MB/s in the first place, 320-350 in the second, whichever build it was).
one_n=() one_r=() one_t=() many_n=() many_r=() many_t=()
# One round of $1 uploads at a time: nginx, then the reference and toursd in the order $2, each
# time appended to the arrays named $3 (nginx), $4 (the reference) and $5 (toursd).
upload_round() {
    local count=$1 order=$2 server
    local -n to_nginx=$3 to_reference=$4 to_toursd=$5
    to_nginx+=("$(new_ids "$count" | timed_uploads "$count" "http://127.0.0.1:$nginx_port/dav/" ".jpg")")
    clear_nginx
    for server in $order; do
        if [ "$server" = reference ]; then
            to_reference+=("$(new_ids "$count" | timed_uploads "$count" "http://127.0.0.1:$reference_port/" "")")
            rm -f "$work/reference"/*
        else
            to_toursd+=("$(new_ids "$count" | timed_uploads "$count" "$toursd_prefix" "?floorId=$floor" "${toursd_args[@]}")")
        fi
    done
}
for round in $(seq 1 "$rounds"); do
    order="reference toursd"
    [ $((round % 2)) = 1 ] || order="toursd reference"
    upload_round 1 "$order" one_n one_r one_t
    upload_round "$concurrent" "$order" many_n many_r many_t
done
one_nginx=$(fastest "${one_n[@]}")
one_reference=$(fastest "${one_r[@]}")
one_toursd=$(fastest "${one_t[@]}")
many_nginx=$(fastest "${many_n[@]}")
many_reference=$(fastest "${many_r[@]}")
many_toursd=$(fastest "${many_t[@]}")

# PUT /v1/properties: a new property per request, 64 connections.
cat > "$work/put.lua" <<'LUA'
local function uuid()
  return (("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx"):gsub("[xy]", function(c)
    return string.format("%x", c == "x" and math.random(0, 15) or math.random(8, 11))
  end))
end
local prefix = os.getenv("PUT_PREFIX")
local headers = { ["Content-Type"] = "application/json" }
if os.getenv("TOKEN") then headers["Authorization"] = "Bearer " .. os.getenv("TOKEN") end
local body = '{"name":"Bench","floorCount":2,"metadata":{"k":"v"}}'
setup = function(thread) math.randomseed(os.time() + tonumber(tostring(thread):match("0x(%x+)"), 16)) end
request = function() return wrk.format("PUT", prefix .. uuid() .. os.getenv("PUT_SUFFIX"), headers, body) end
LUA
seconds=${BENCH_SECONDS:-10}
PUT_PREFIX=/dav/props/ PUT_SUFFIX=.json wrk -t2 -c64 -d"${seconds}s" -s "$work/put.lua" "http://127.0.0.1:$nginx_port" > "$work/wrk-put-nginx.txt"
TOKEN=$token PUT_PREFIX=/v1/properties/ PUT_SUFFIX= wrk -t2 -c64 -d"${seconds}s" -s "$work/put.lua" "http://127.0.0.1:$TOURSD_PORT" > "$work/wrk-put-toursd.txt"
put_nginx=$(grep -o 'Requests/sec: *[0-9.]*' "$work/wrk-put-nginx.txt" | awk '{print $2}')
put_toursd=$(grep -o 'Requests/sec: *[0-9.]*' "$work/wrk-put-toursd.txt" | awk '{print $2}')
put_errors=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$work/wrk-put-toursd.txt" | awk '{print $5}' || true)

python3 - "$size_mb" "$concurrent" "$one_nginx" "$one_toursd" "$many_nginx" "$many_toursd" "$put_nginx" "$put_toursd" "${put_errors:-0}" "$one_reference" "$many_reference" "$rounds" \
    "$idle_rss" "$rss_one" "$rss_uploads" "$rss_processing" "$rss_back" <<'PY'
import sys
size, n = int(sys.argv[1]), int(sys.argv[2])
one_nginx, one_toursd, many_nginx, many_toursd, put_nginx, put_toursd = map(float, sys.argv[3:9])
put_errors = int(sys.argv[9])
one_reference, many_reference = map(float, sys.argv[10:12])
rounds = sys.argv[12]
idle, rss_one, rss_uploads, rss_processing = map(float, sys.argv[13:17])
back = sys.argv[17]
rate = lambda mb, s: mb / s
print(f"Uploads of {size} MB with curl, same run, best of {rounds} alternating rounds: toursd against the durable reference (read, hash, write,")
print(f"fdatasync, rename, fsync the directory; a thread per connection), and nginx's DAV PUT (neither hashed nor fsynced)")
print(f"  {'':<26}{'reference':>10}{'toursd':>8}{'ratio':>8}{'':<22}{'nginx':>7}   (MB/s)")
print(f"  {'one upload':<26}{rate(size, one_reference):>10.0f}{rate(size, one_toursd):>8.0f}{one_reference / one_toursd:>7.2f}x  (target >= 0.95x)"
      f"{rate(size, one_nginx):>10.0f}")
print(f"  {f'{n} concurrent (aggregate)':<26}{rate(size * n, many_reference):>10.0f}{rate(size * n, many_toursd):>8.0f}"
      f"{many_reference / many_toursd:>7.2f}x  (target >= 0.95x){rate(size * n, many_nginx):>10.0f}")
print(f"  toursd RSS, idle {idle:.1f} MB: peak {rss_one:.1f} MB after one upload, {rss_uploads:.1f} MB after {n} at once (target <= 48 MB); "
      f"{rss_processing:.1f} MB with their processing (target <= 64 MB); back under 40 MB {back} s after (target <= 30 s)")
print(f"PUT /v1/properties (a new property each, committed with fsync), wrk -t2 -c64")
print(f"  nginx DAV PUT of the same JSON: {put_nginx:.0f} req/s; toursd: {put_toursd:.0f} req/s ({put_toursd / put_nginx:.2f}x)"
      + (f"; {put_errors} non-2xx answers" if put_errors else ""))
PY
echo "$patches"
