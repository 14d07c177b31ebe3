#!/usr/bin/env bash
# make test: the attacks of attack.py against the newest built toursd (make test builds the
# debug one; after make build, the release one operators run).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT
bin=.build/debug/toursd
if [ -x .build/release/toursd ] && [ .build/release/toursd -nt "$bin" ]; then bin=.build/release/toursd; fi
TOURSD_BIN=$bin start_toursd "$work"
token=$(cat "$work/data/admin.token")
property=$(cat /proc/sys/kernel/random/uuid) floor=$(cat /proc/sys/kernel/random/uuid)
curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"name":"Attacked","floorCount":1}' "http://127.0.0.1:$TOURSD_PORT/v1/properties/$property"
curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $token" -d '{"number":0}' "http://127.0.0.1:$TOURSD_PORT/v1/properties/$property/floors/$floor"
python3 Tests/attack/attack.py "$TOURSD_PORT" "$TOURSD_PID" "$token" "$floor"
