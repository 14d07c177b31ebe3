#!/usr/bin/env bash
# Uploads iOS resumes (the IETF resumable-upload draft): one 50 MB upload in one request as
# URLSession sends it (Upload-Draft-Interop-Version 8, Upload-Complete: ?1, the 104 with the
# upload's Location first) beside the same bytes as a plain one-shot PUT, with curl, same
# run, the order alternating, the median of the rounds' ratios; then the same upload cut after half, its offset asked
# and the rest sent: the bytes sent again (target ≤ 1 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX) # on a real disk, as uploads.sh
trap 'stop_servers "$work"' EXIT
size_mb=${UPLOAD_MB:-50}
rounds=${UPLOAD_ROUNDS:-6}

build_release toursd
jpeg_like "$((size_mb << 20))" "$work/upload.bin"
start_toursd "$work"
token=$(cat "$work/data/admin.token")
auth="Authorization: Bearer $token"
base="http://127.0.0.1:$TOURSD_PORT"
property=$(cat /proc/sys/kernel/random/uuid) floor=$(cat /proc/sys/kernel/random/uuid)
curl -fs -o /dev/null -X PUT -H "$auth" -d '{"name":"Bench","floorCount":1}' "$base/v1/properties/$property"
curl -fs -o /dev/null -X PUT -H "$auth" -d '{"number":0}' "$base/v1/properties/$property/floors/$floor"

# Seconds for one PUT of the file as a new panorama, extra curl arguments after; fails on
# anything but 201.
timed_put() {
    local start end status
    sync
    start=$(date +%s.%N)
    status=$(curl -sS -o /dev/null -w '%{http_code}' -T "$work/upload.bin" -H "$auth" -H "Content-Type: image/jpeg" "$@" \
        "$base/v1/panoramas/$(cat /proc/sys/kernel/random/uuid)?floorId=$floor")
    end=$(date +%s.%N)
    [ "$status" = 201 ] || { echo "bench: a PUT was answered $status" >&2; return 1; }
    python3 -c "print($end - $start)"
}
plain=() draft=()
draft_put() { timed_put -H "Upload-Draft-Interop-Version: 8" -H "Upload-Complete: ?1" -H "Upload-Length: $((size_mb << 20))"; }
# Rounds alternate which goes first (the disk's state after one run is the next one's).
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) = 1 ]; then
        plain+=("$(timed_put)"); draft+=("$(draft_put)")
    else
        draft+=("$(draft_put)"); plain+=("$(timed_put)")
    fi
done
cut=$(.venv/bin/python bench/resumable_cut.py "$base" "$token" "$floor" "$work/upload.bin")
python3 - "$size_mb" "$rounds" $cut "${plain[@]}" "${draft[@]}" <<'PY'
import statistics, sys
size, rounds, again, resume = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
times = list(map(float, sys.argv[5:]))
plain, draft = times[:rounds], times[rounds:]
# This machine's disk slows as a run writes (the first uploads are the fastest): each round's
# pair is compared, the order alternating, and the median of the rounds' ratios is the figure.
ratio = statistics.median(p / d for p, d in zip(plain, draft))
print(f"Uploads iOS resumes (IETF draft, interop 8), {size} MB with curl, same run, {rounds} rounds, the order alternating")
print(f"  {'':<40}{'one-shot PUT':>13}{'draft PUT':>11}{'ratio':>8}   target")
print(f"  {'one upload in one request, best (MB/s)':<40}{size / min(plain):>13.0f}{size / min(draft):>11.0f}")
print(f"  {'median of the rounds, draft/one-shot':<40}{'':>24}{ratio:>7.2f}x   >= 0.95x")
print(f"  cut after half, resumed: {again} bytes sent again (target <= {1 << 20}); HEAD to panorama {resume:.2f} s")
PY
