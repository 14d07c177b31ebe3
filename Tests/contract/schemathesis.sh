#!/usr/bin/env bash
# Contract test: schemathesis generates requests from docs/openapi.yaml against a running
# toursd and checks that no answer is a 5xx and every answer is inside the schema.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
work=$(mktemp -d)
trap 'stop_servers "$work"' EXIT
TOURSD_BIN=.build/debug/toursd start_toursd "$work"
port=$TOURSD_PORT
token=$(cat "$work/data/admin.token")
# A fixed seed: the same cases on every run, so a failure can be replayed.
.venv/bin/schemathesis --config-file Tests/contract/schemathesis.toml run docs/openapi.yaml \
    --url "http://127.0.0.1:$port" \
    -H "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "${SCHEMATHESIS_EXAMPLES:-30}" \
    --seed 20261130 \
    --no-color
