#!/usr/bin/env bash
# make test: the attacks of attack.py against the release toursd operators run (make test
# builds it first; the debug one when run by hand without it).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT
bin=.build/release/toursd
[ -x "$bin" ] || bin=.build/debug/toursd
TOURSD_BIN=$bin start_toursd "$work"
token=$(cat "$work/data/admin.token")
property=$(cat /proc/sys/kernel/random/uuid) floor=$(cat /proc/sys/kernel/random/uuid)
curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"name":"Attacked","floorCount":1}' "http://127.0.0.1:$TOURSD_PORT/v1/properties/$property"
curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"number":0}' "http://127.0.0.1:$TOURSD_PORT/v1/properties/$property/floors/$floor"
python3 Tests/attack/attack.py "$TOURSD_PORT" "$TOURSD_PID" "$token" "$floor"
