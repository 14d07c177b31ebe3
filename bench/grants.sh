#!/usr/bin/env bash
# What a grant costs a read: GET /v1/floors/{id} on one toursd with the tenant's token (its
# check asked beside the read) and with a capture grant on the floor's property (the grant
# looked up, and the floor's property, before the read); wrk -t2 -c64, the two taking turns for
# BENCH_ROUNDS rounds (3), medians printed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT
start_toursd "$work" >/dev/null
base="http://127.0.0.1:$TOURSD_PORT"
declare -A token
token[tenant]=$(cat "$work/data/admin.token")
floor=$(bench_floor "$base" "${token[tenant]}")
property=$(curl -fs -H "Authorization: Bearer ${token[tenant]}" "$base/v1/floors/$floor" | python3 -c 'import json, sys; print(json.load(sys.stdin)["propertyId"])')
token[grant]=$(curl -fs -H "Authorization: Bearer ${token[tenant]}" -H "Content-Type: application/json" \
    -d "{\"scopes\":[\"capture\"],\"propertyIds\":[\"$property\"],\"expiresInSeconds\":86400}" "$base/v1/grants" \
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
