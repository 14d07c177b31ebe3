#!/usr/bin/env bash
# Uploads into an S3 bucket: one 50 MB upload and 32 concurrent ones through toursd's one-shot
# panorama PUT (received, hashed, then sent to the bucket, the row committed once the store
# answered) beside boto3's upload_file of the same file straight to the same store (its
# default transfer: 8 MB parts, 10 threads per file), with rclone serve s3 as the store;
# toursd's peak RSS meanwhile. Each figure is the best of the rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX) # on a real disk (not tmpfs): the store writes there
# The store first: its pid file is under $work, which stop_servers removes.
trap 'bash Tests/s3/store.sh stop "$work/s3" 2>/dev/null || true; stop_servers "$work"' EXIT
size_mb=${UPLOAD_MB:-50}
concurrent=${UPLOAD_CONCURRENCY:-32}
rounds=${UPLOAD_ROUNDS:-3}

build_release toursd
jpeg_like "$((size_mb << 20))" "$work/upload.bin"
mkdir -p "$work/s3"
export $(bash Tests/s3/store.sh start rclone "$work/s3")
.venv/bin/python -c 'import boto3; boto3.client("s3").create_bucket(Bucket="bench")'
TOURSD_blobStore="s3://bench/toursd" start_toursd "$work"
token=$(cat "$work/data/admin.token")
auth="Authorization: Bearer $token"
floor=$(bench_floor "http://127.0.0.1:$TOURSD_PORT" "$token")

# Seconds for $1 uploads at once through toursd, each a new panorama. Fails on any non-2xx.
toursd_uploads() {
    local start end
    start=$(date +%s.%N)
    for _ in $(seq 1 "$1"); do cat /proc/sys/kernel/random/uuid; done |
        xargs -P "$1" -I{} curl -fsS -o /dev/null -T "$work/upload.bin" -H "$auth" -H "Content-Type: image/jpeg" \
            "http://127.0.0.1:$TOURSD_PORT/v1/panoramas/{}?floorId=$floor"
    end=$(date +%s.%N)
    python3 -c "print($end - $start)"
}
# Seconds for $1 boto3 upload_file calls at once (a thread each), each to a new key.
boto3_uploads() {
    .venv/bin/python - "$1" "$work/upload.bin" <<'PY'
import sys, time, uuid, boto3
from concurrent.futures import ThreadPoolExecutor
count, path = int(sys.argv[1]), sys.argv[2]
client = boto3.client("s3")
started = time.monotonic()
with ThreadPoolExecutor(count) as pool:
    list(pool.map(lambda _: client.upload_file(path, "bench", "boto3/" + str(uuid.uuid4())), range(count)))
print(time.monotonic() - started)
PY
}
fastest() { python3 -c "import sys; print(min(map(float, sys.argv[1:])))" "$@"; }
clear_bucket() { rm -rf "$work/s3/data/bench"/*; sync; }

one_b=() one_t=() many_b=() many_t=()
for _ in $(seq 1 "$rounds"); do
    clear_bucket; one_b+=("$(boto3_uploads 1)")
    clear_bucket; one_t+=("$(toursd_uploads 1)")
    clear_bucket; many_b+=("$(boto3_uploads "$concurrent")")
    clear_bucket; many_t+=("$(toursd_uploads "$concurrent")")
done
rss=$(peak_rss_mb "$TOURSD_PID")
python3 - "$size_mb" "$concurrent" "$(fastest "${one_b[@]}")" "$(fastest "${one_t[@]}")" "$(fastest "${many_b[@]}")" "$(fastest "${many_t[@]}")" "$rss" <<'PY'
import sys
size, count = int(sys.argv[1]), int(sys.argv[2])
one_b, one_t, many_b, many_t, rss = map(float, sys.argv[3:])
print(f"uploads into a bucket (rclone serve s3 on loopback), {size} MB each, best of the rounds:")
print(f"  one upload:      toursd {size / one_t:7.1f} MB/s   boto3 upload_file {size / one_b:7.1f} MB/s   ratio {one_b / one_t:.2f}x")
print(f"  {count} at once:     toursd {size * count / many_t:7.1f} MB/s   boto3, {count} threads {size * count / many_b:7.1f} MB/s   ratio {many_b / many_t:.2f}x")
print(f"  toursd peak RSS: {rss:.1f} MB (target 64 MB)")
PY
