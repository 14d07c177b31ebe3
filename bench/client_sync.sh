#!/usr/bin/env bash
# The client library's upload queue draining 50 panoramas of 10 MB, 4 at a time, to a local
# toursd, beside one curl process uploading the same files 4 at a time over reused
# connections (--parallel, a config file) to the same server in the same run: the same
# one-shot PUTs, each with its Repr-Digest. Rounds alternate which
# goes first; the best round of each is compared. The library's peak RSS is over its drain.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
trap 'stop_servers "$work"' EXIT
build_release toursd ClientBench
count=${DRAIN_FILES:-50}
size_mb=${DRAIN_MB:-10}
rounds=${DRAIN_ROUNDS:-2}

mkdir -p "$work/files"
for i in $(seq -w 1 "$count"); do jpeg_like "$((size_mb << 20))" "$work/files/pano-$i.jpg"; done
# "file digest" lines, the digest as Repr-Digest wants it (base64 of the SHA-256).
for f in "$work"/files/*.jpg; do
    printf '%s %s\n' "$f" "$(openssl dgst -sha256 -binary "$f" | base64 -w0)"
done > "$work/digests"
start_toursd "$work"
token=$(cat "$work/data/admin.token")
base="http://127.0.0.1:$TOURSD_PORT"

# Seconds for curl to upload every file into a new property's floor, 4 at a time.
curl_round() {
    local property floor start end
    property=$(python3 -c 'import uuid; print(uuid.uuid4())')
    floor=$(python3 -c 'import uuid; print(uuid.uuid4())')
    curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"name":"curl","floorCount":1}' "$base/v1/properties/$property"
    curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"number":0}' "$base/v1/properties/$property/floors/$floor"
    # One curl process, 4 transfers at a time over reused connections, as the library does.
    python3 - "$work/digests" "$base" "$token" "$floor" > "$work/curl.config" <<'PY'
import sys, uuid
digests, base, token, floor = sys.argv[1:5]
print("parallel\nparallel-max = 4\nsilent\nshow-error")
for index, line in enumerate(open(digests)):
    path, digest = line.split()
    if index:
        print("next")
    print(f'fail\nsilent\nshow-error\noutput = "/dev/null"\nupload-file = "{path}"\nheader = "Authorization: Bearer {token}"\n'
          f'header = "Content-Type: image/jpeg"\nheader = "Repr-Digest: sha-256=:{digest}:"\nurl = "{base}/v1/panoramas/{uuid.uuid4()}?floorId={floor}"')
PY
    start=$(date +%s.%N)
    curl --no-progress-meter --config "$work/curl.config"
    end=$(date +%s.%N)
    curl -fsS -o /dev/null -X DELETE -H "Authorization: Bearer $token" "$base/v1/properties/$property"
    python3 -c "print($end - $start)"
}

library_round() {
    .build/release/ClientBench drain "$base" "$token" "$work/files"
}

curl_times=() library_times=() library_rss=()
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then
        curl_times+=("$(curl_round)")
        read -r seconds rss < <(library_round)
    else
        read -r seconds rss < <(library_round)
        curl_times+=("$(curl_round)")
    fi
    library_times+=("$seconds")
    library_rss+=("$rss")
done

python3 - "$count" "$size_mb" "${curl_times[*]}" "${library_times[*]}" "${library_rss[*]}" <<'PY'
import sys
count, size = int(sys.argv[1]), int(sys.argv[2])
curl, library, rss = ([float(v) for v in arg.split()] for arg in sys.argv[3:6])
total = count * size
print(f"Client upload queue: {count} panoramas of {size} MB, 4 at a time, to the same toursd, same run")
print(f"  rounds, seconds: curl --parallel 4 {' '.join(f'{v:.2f}' for v in curl)}; library {' '.join(f'{v:.2f}' for v in library)}")
print(f"  best: curl {min(curl):.2f} s ({total / min(curl):.0f} MB/s), library {min(library):.2f} s ({total / min(library):.0f} MB/s): "
      f"{min(library) / min(curl):.2f}x curl's time (target <= 1.10x)")
print(f"  library peak RSS while draining: {max(rss):.1f} MB (target < 48 MB)")
PY
