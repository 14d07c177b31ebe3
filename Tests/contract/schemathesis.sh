#!/usr/bin/env bash
# Contract test: schemathesis generates requests from docs/openapi.yaml against a running
# toursd and checks that no answer is a 5xx and every answer is inside the schema.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
# TOURSD_URL and TOURSD_TOKEN: against toursd already running there (several behind a
# balancer, Tests/postgres/scaleout.sh); else a debug toursd of the test's own.
if [ -z "${TOURSD_URL:-}" ]; then
    work=$(mktemp -d)
    trap 'stop_servers "$work"' EXIT
    TOURSD_BIN=.build/debug/toursd start_toursd "$work"
    TOURSD_URL="http://127.0.0.1:$TOURSD_PORT" TOURSD_TOKEN=$(cat "$work/data/admin.token")
fi
token=$TOURSD_TOKEN
# Test data the hooks (schemathesis_hooks.py) put in place of generated ids: a property with a
# floor, a panorama on it, an unfinished upload, and the property's tour.
api() { curl -fsS -H "Authorization: Bearer $token" "$@"; }
uuid() { cat /proc/sys/kernel/random/uuid; }
export ST_URL="$TOURSD_URL" ST_TOKEN="$token" ST_PROPERTY=$(uuid) ST_FLOOR=$(uuid) ST_PANORAMA=$(uuid)
export ST_TOUR=$(api -X PUT -H "Content-Type: application/json" -d '{"name":"Contract","floorCount":1}' "$ST_URL/v1/properties/$ST_PROPERTY" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["tourId"])')
api -o /dev/null -X PUT -H "Content-Type: application/json" -d '{"number":0}' "$ST_URL/v1/properties/$ST_PROPERTY/floors/$ST_FLOOR"
api -o /dev/null -X PUT -H "Content-Type: image/jpeg" --data-binary "$(printf '\377\330\377contract panorama')" "$ST_URL/v1/panoramas/$ST_PANORAMA?floorId=$ST_FLOOR"
metadata="panoramaId $(uuid | tr -d '\n' | base64 -w0),floorId $(printf %s "$ST_FLOOR" | base64 -w0),contentType $(printf image/jpeg | base64 -w0)"
ST_UPLOAD=$(api -o /dev/null -D - -X POST -H "Tus-Resumable: 1.0.0" -H "Upload-Length: 100000000" -H "Upload-Metadata: $metadata" \
    "$ST_URL/v1/uploads" | tr -d '\r' | awk 'tolower($1) == "location:" { split($2, p, "/"); print p[4] }')  # /v1/uploads/{uploadId}/{capability}
[ -n "$ST_UPLOAD" ] || { echo "could not create the contract test's upload" >&2; exit 1; }
export ST_UPLOAD
# A fixed seed: the same cases on every run, so a failure can be replayed. SCHEMATHESIS_EXCLUDE:
# a path left out (through a balancer, /metrics is not served: docs/scale-out.md).
.venv/bin/schemathesis --config-file Tests/contract/schemathesis.toml run docs/openapi.yaml \
    --url "$TOURSD_URL" \
    ${SCHEMATHESIS_EXCLUDE:+--exclude-path "$SCHEMATHESIS_EXCLUDE"} \
    -H "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "${SCHEMATHESIS_EXAMPLES:-30}" \
    --seed 20261130 \
    --no-color
