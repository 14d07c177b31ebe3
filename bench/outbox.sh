#!/usr/bin/env bash
# The events outbox's cost (issue 34): toursd as it is beside toursd built from the commit
# before the outbox (c715a6b), same run, alternating: one-shot panorama PUTs (a new 32 KB
# panorama each) and plan PUTs (a new plan of 5 rooms each on one floor), wrk -c16 each.
# Every such change now also takes the tenant's event id and writes its event (and notes its
# tour change) in the same transaction. Target: the outbox costs at most 5 % of their req/s.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
base_rev=c715a6b # the last commit before the outbox
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    git worktree remove --force "$work/base" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

build_release toursd
git worktree add --detach -q "$work/base" "$base_rev"
# Built as `make build` builds today (the Makefile's RELEASE), whatever the base's Makefile said.
flags=$(make -s --no-print-directory release-flags)
# $flags unquoted: one word each.
if ! (cd "$work/base" && swift build $flags --product toursd > "$work/base-build.log" 2>&1); then
    cat "$work/base-build.log" >&2
    echo "bench: cannot build toursd at $base_rev" >&2
    exit 1
fi

# start NAME TREE: the toursd of that tree, on its own configuration and data directory; sets
# PORT_NAME, TOKEN_NAME, FLOOR_NAME.
start() {
    local name=$1 tree=$2 port token property floor
    "$tree/.build/release/toursd" serve --config "$tree/config/toursd.json" --port 0 --data-dir "$work/$name" 2> "$work/$name.log" &
    pids+=($!)
    port=$(toursd_port "$work/$name.log")
    wait_for_url "http://127.0.0.1:$port/healthz"
    token=$(cat "$work/$name/admin.token")
    property=$(cat /proc/sys/kernel/random/uuid) floor=$(cat /proc/sys/kernel/random/uuid)
    curl -fs -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"name":"Bench","floorCount":1}' "http://127.0.0.1:$port/v1/properties/$property"
    curl -fs -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"number":0}' "http://127.0.0.1:$port/v1/properties/$property/floors/$floor"
    printf -v "PORT_$name" %s "$port"
    printf -v "TOKEN_$name" %s "$token"
    printf -v "FLOOR_$name" %s "$floor"
}
start base "$work/base"
start outbox .

cat > "$work/writes.lua" <<'LUA'
local function uuid()
  return (("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx"):gsub("[xy]", function(c)
    return string.format("%x", c == "x" and math.random(0, 15) or math.random(8, 11))
  end))
end
local kind, floor, token = os.getenv("KIND"), os.getenv("FLOOR"), os.getenv("TOKEN")
local image = "\255\216\255\224" .. string.rep("x", 32 * 1024 - 4)
local rooms = {}
for i = 1, 5 do
  rooms[i] = string.format('{"id":"00000000-0000-4000-8000-00000000000%d","name":"Room %d","outline":[[0,0],[4,0],[4,3],[0,3]],"height":2.5}', i, i)
end
setup = function(thread) math.randomseed(os.time() + tonumber(tostring(thread):match("0x(%x+)"), 16)) end
request = function()
  if kind == "panorama" then
    return wrk.format("PUT", "/v1/panoramas/" .. uuid() .. "?floorId=" .. floor,
                      { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "image/jpeg" }, image)
  end
  local body = '{"planId":"' .. uuid() .. '","mode":"newScan","rooms":[' .. table.concat(rooms, ",") .. ']}'
  return wrk.format("PUT", "/v1/floors/" .. floor .. "/plan", { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }, body)
end
LUA

# rate NAME KIND: requests per second of that server for that kind of write (fails on any error).
rate() {
    local port token floor
    port=$(eval echo "\$PORT_$1") token=$(eval echo "\$TOKEN_$1") floor=$(eval echo "\$FLOOR_$1")
    KIND=$2 FLOOR=$floor TOKEN=$token WRK_CONNECTIONS=16 wrk_figures "http://127.0.0.1:$port" "$work/wrk-$1-$2.txt" -s "$work/writes.lua" | awk '{print $1}'
}
rounds=${OUTBOX_ROUNDS:-3}
results=()
for kind in panorama plan; do
    for round in $(seq 1 "$rounds"); do
        sync
        if [ $((round % 2)) = 1 ]; then b=$(rate base $kind); o=$(rate outbox $kind); else o=$(rate outbox $kind); b=$(rate base $kind); fi
        results+=("$kind $b $o")
    done
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [line.split() for line in sys.stdin if line.strip()]
print(f"The events outbox, same run: toursd beside toursd before the outbox (c715a6b), wrk -c16, {len(rows) // 2} alternating rounds, median")
for kind, what in (("panorama", "PUT /v1/panoramas/{id} (32 KB, a new one each)"), ("plan", "PUT /v1/floors/{id}/plan (5 rooms, a new plan each)")):
    pairs = [(float(b), float(o)) for k, b, o in rows if k == kind]
    base, outbox = statistics.median(b for b, _ in pairs), statistics.median(o for _, o in pairs)
    ratio = statistics.median(o / b for b, o in pairs)
    rounds = " ".join(f"{o / b:.2f}" for b, o in pairs)
    print(f"  {what:<52} before {base:>7.0f} req/s   with events {outbox:>7.0f} req/s   rounds {rounds}: {ratio:.2f}x (target >= 0.95x)")
'
