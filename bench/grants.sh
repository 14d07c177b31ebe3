#!/usr/bin/env bash
# What a grant costs a read: GET /v1/floors/{id} on one toursd with the tenant's token (its
# check asked beside the read) and with a capture grant on the floor's property (the grant
# looked up, and the floor's property, before the read); wrk -t2 -c64, the two taking turns for
# BENCH_ROUNDS rounds (3), medians printed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
[ -n "${TOURSD_BIN:-}" ] || build_release toursd

"${TOURSD_BIN:-.build/release/toursd}" serve --config config/toursd.json --port 0 --data-dir "$work/data" 2> "$work/toursd.log" &
pids+=($!)
port=$(toursd_port "$work/toursd.log")
base="http://127.0.0.1:$port"
wait_for_url "$base/healthz" >/dev/null
declare -A token
token[tenant]=$(cat "$work/data/admin.token")
property=$(python3 -c 'import uuid; print(uuid.uuid4())') floor=$(python3 -c 'import uuid; print(uuid.uuid4())')
api() { curl -fs -H "Authorization: Bearer ${token[tenant]}" -H "Content-Type: application/json" "$@"; }
api -X PUT -d '{"name":"Granted villa","floorCount":1}' "$base/v1/properties/$property" >/dev/null
api -X PUT -d '{"number":0}' "$base/v1/properties/$property/floors/$floor" >/dev/null
token[grant]=$(api -X POST -d "{\"scopes\":[\"capture\"],\"propertyIds\":[\"$property\"],\"expiresInSeconds\":86400}" "$base/v1/grants" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')

rounds=${BENCH_ROUNDS:-3}
for _ in $(seq 1 "$rounds"); do
    for name in tenant grant; do
        wrk_figures "$base/v1/floors/$floor" "$work/wrk-$name.txt" -H "Authorization: Bearer ${token[$name]}" >> "$work/$name.figures"
    done
done

python3 - "$work/tenant.figures" "$work/grant.figures" "$rounds" <<'PY'
import statistics, sys
def medians(path):
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
tenant_rps, tenant_p99 = medians(sys.argv[1])
grant_rps, grant_p99 = medians(sys.argv[2])
print(f"GET /v1/floors/{{id}} with the tenant's token and with a capture grant, one toursd, wrk -t2 -c64, median of {sys.argv[3]} alternating rounds")
print(f"  {'credential':<24}{'req/s':>10}{'p99 ms':>10}")
print(f"  {'tenant token':<24}{tenant_rps:>10.0f}{tenant_p99:>10.2f}")
print(f"  {'capture grant':<24}{grant_rps:>10.0f}{grant_p99:>10.2f}")
print(f"  ratio grant/tenant: req/s {grant_rps / tenant_rps:.2f}x (target >= 0.60x: two lookups before the read), p99 {grant_p99 / tenant_p99:.2f}x")
PY
