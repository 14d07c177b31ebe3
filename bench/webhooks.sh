#!/usr/bin/env bash
# Webhook deliveries (issue 34): events per second delivered to a fast receiver (nginx answering
# 204), one endpoint, beside one curl process sending the same event bodies one at a time over
# one connection to the same receiver, same run. An endpoint's deliveries are one at a time by
# design (in order); each is signed, sent and recorded (its attempt and the cursor committed).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
events=${WEBHOOK_BENCH_EVENTS:-2000}
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
cleanup() {
    [ -n "${TOURSD_PID:-}" ] && kill "$TOURSD_PID" 2>/dev/null || true
    [ -f "$work/receiver/nginx.pid" ] && kill "$(cat "$work/receiver/nginx.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
build_release toursd

# The receiver: nginx answering 204 to every POST, its body discarded.
receiver_port=$(free_port)
mkdir -p "$work/receiver/logs" "$work/receiver/tmp"
cat > "$work/receiver/nginx.conf" <<CONF
worker_processes 1;
user root root;
pid $work/receiver/nginx.pid;
error_log $work/receiver/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/receiver/tmp;
    server {
        listen 127.0.0.1:$receiver_port;
        location = /hook { return 204; }
        location = /healthz { return 200 '{"status":"ok"}'; }
    }
}
CONF
nginx -c "$work/receiver/nginx.conf" >/dev/null 2>&1
wait_for_url "http://127.0.0.1:$receiver_port/healthz" >/dev/null

python3 - config/toursd.json "$work/toursd.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config.update({"webhookAllowPrivateTargets": True, "webhookPollMs": 50, "tourChangedQuietSeconds": 3600})
json.dump(config, open(sys.argv[2], "w"))
PY
TOURSD_CONFIG="$work/toursd.json" start_toursd "$work"
token=$(cat "$work/data/admin.token")

# The events: property creations, then an endpoint delivering them all from the start.
python3 - "$TOURSD_PORT" "$token" "$events" <<'PY'
import http.client, json, sys, uuid
port, token, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(count):
    connection.request("PUT", f"/v1/properties/{uuid.uuid4()}", json.dumps({"name": "Bench", "floorCount": 1}),
                       {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status == 201, response.status
PY
curl -fs -H "Authorization: Bearer $token" "http://127.0.0.1:$TOURSD_PORT/v1/events?after=0&limit=200" > "$work/page.json"
python3 -c 'import json,sys; [print(json.dumps(e, separators=(",", ":"))) for e in json.load(open(sys.argv[1]))["items"]]' "$work/page.json" > "$work/bodies.jsonl"
webhook=$(curl -fs -X POST -H "Authorization: Bearer $token" -d "{\"url\":\"http://127.0.0.1:$receiver_port/hook\"}" \
    "http://127.0.0.1:$TOURSD_PORT/v1/webhooks" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
start=$(date +%s.%N)
curl -fs -o /dev/null -X POST -H "Authorization: Bearer $token" -d '{"after":"0"}' "http://127.0.0.1:$TOURSD_PORT/v1/webhooks/$webhook/redeliver"
deadline=$((SECONDS + 600))
while :; do
    after=$(curl -fs -H "Authorization: Bearer $token" "http://127.0.0.1:$TOURSD_PORT/v1/webhooks/$webhook" | python3 -c 'import json,sys; print(json.load(sys.stdin)["after"])')
    [ "$after" -ge "$events" ] && break
    [ $SECONDS -lt $deadline ] || { echo "bench: the deliveries did not finish (at $after of $events)" >&2; exit 1; }
    sleep 0.05
done
delivered=$(python3 -c "import sys; print($events / ($(date +%s.%N) - $start))")

# The reference: one curl, the same bodies (the feed's first page, repeated to the same
# count), one at a time over one connection.
python3 - "$work/bodies.jsonl" "$events" "http://127.0.0.1:$receiver_port/hook" > "$work/curl.conf" <<'PY'
import sys
bodies = open(sys.argv[1]).read().splitlines()
for index in range(int(sys.argv[2])):
    body = bodies[index % len(bodies)].replace("\\", "\\\\").replace('"', '\\"')
    if index:
        print("next")
    print(f'url = "{sys.argv[3]}"\ndata = "{body}"\nheader = "Content-Type: application/json"\noutput = "/dev/null"')
PY
start=$(date +%s.%N)
curl -fs -K "$work/curl.conf"
reference=$(python3 -c "import sys; print($events / ($(date +%s.%N) - $start))")
python3 - "$delivered" "$reference" "$events" <<'PY'
import sys
delivered, reference, events = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print(f"webhook deliveries to a fast receiver ({events} events, one endpoint, each signed, sent and recorded): "
      f"{delivered:,.0f} events/s; one curl sending the same bodies one at a time: {reference:,.0f} req/s; ratio {delivered / reference:.2f}")
PY
