#!/usr/bin/env bash
# Three toursd on one PostgreSQL and one shared blob folder, behind nginx as a round-robin
# balancer (issue 16): every request may land on any daemon. They start at the same moment
# (the migrations are applied once, under an advisory lock; one daemon writes the first
# token). Then, through the balancer: schemathesis, tuspy, the tours command line syncing a
# property, and the cross-instance checks of Tests/postgres/scaleout.py (ids and tourIds, a
# token revoked on one daemon refused by all at once, a daemon killed mid-upload), and the
# balancer drill (HAProxy checking /readyz, Tests/postgres/balancer_drill.py).
# With SCALEOUT_S3=moto or rclone, the blobs are in a bucket of that store instead
# (Tests/s3/store.sh), and the daemons share nothing but the database, the bucket and the
# key file the scale-out file names (webhookKeyFile): the fourth edge found them unable to
# resume each other's uploads when each made a key of its own.
#   scaleout.sh TOURSD TOURS
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
toursd=${1:-.build/release/toursd} tours=${2:-.build/debug/tours}
work=$(mktemp -d /tmp/toursd-scaleout.XXXXXX)
chmod 755 "$work" # the postgres user runs the cluster inside
pids=()
cleanup() {
    local status=$?
    # A failure shows what the daemons and nginx last said (CI keeps nothing else).
    if [ "$status" != 0 ]; then
        for log in "$work"/d?.log "$work"/relayed.log "$work"/drained.log "$work"/haproxy.log "$work/nginx/logs/error.log"; do
            [ -f "$log" ] && { echo "--- the end of $log"; tail -n 15 "$log"; }
        done
    fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    stop_nginx "$work"
    [ -d "$work/s3" ] && bash Tests/s3/store.sh stop "$work/s3"
    bash Tests/postgres/cluster.sh stop "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT
server=$(bash Tests/postgres/cluster.sh start "$work/pg")
# The role and the database as the docs make them (config/postgresql/toursd-database.sql); the
# daemons log in as that role, not as the superuser.
password="scaleout-$RANDOM$RANDOM"
psql "$server/postgres" -q -v password="'$password'" -f config/postgresql/toursd-database.sql
database="${server/postgres@/toursd:$password@}/tours"
mkdir -p "$work/blobs"
if [ -n "${SCALEOUT_S3:-}" ]; then
    mkdir -p "$work/s3"
    export $(bash Tests/s3/store.sh start "$SCALEOUT_S3" "$work/s3")
    .venv/bin/python -c 'import boto3; boto3.client("s3").create_bucket(Bucket="tours")'
    export TOURSD_blobStore="s3://tours/scaleout"
    echo "scale-out: blobs in a bucket of $SCALEOUT_S3 at $AWS_ENDPOINT_URL"
else
    export TOURSD_blobStore=directory
fi

# Every daemon delivers webhooks to a receiver on loopback (the webhook check below), quickly.
export TOURSD_webhookAllowPrivateTargets=true TOURSD_webhookPollMs=50 TOURSD_webhookTimeoutMs=2000
# The two files the scale-out file names, as docs/scale-out.md says to make them once and give
# every daemon: the webhook key (it signs upload URLs too) and /metrics's token.
head -c 32 /dev/urandom > "$work/webhook.key"
head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$work/metrics.token"
chmod 600 "$work/webhook.key" "$work/metrics.token"
export TOURSD_webhookKeyFile="$work/webhook.key" TOURSD_metricsTokenFile="$work/metrics.token"
# The blob folder, when the blobs are in one (with a bucket, the daemons share no folder).
[ -n "${SCALEOUT_S3:-}" ] || export TOURSD_blobDir="$work/blobs"
ports=()
for n in 1 2 3; do
    mkdir -p "$work/d$n"
    # The docs' configuration (config/toursd-scale-out.json: no 104s behind nginx 1.22, which
    # breaks a connection on a 1xx other than 100), with this machine's addresses over it.
    TOURSD_databaseUrl="$database" TOURSD_trustedProxies=127.0.0.1 \
        "$toursd" serve --config config/toursd-scale-out.json --port 0 --data-dir "$work/d$n" 2> "$work/d$n.log" &
    pids+=($!)
done
for n in 1 2 3; do ports+=("$(toursd_port "$work/d$n.log")"); done
for port in "${ports[@]}"; do wait_for_url "http://127.0.0.1:$port/healthz" >/dev/null; done
applied=$(cat "$work"/d?.log | grep -c "migration applied" || true)
made=$(ls "$work"/d?/admin.token 2>/dev/null | wc -l)
echo "scale-out: 3 toursd on ports ${ports[*]}; migrations applied $applied time(s) in all (one per file), first token written by $made daemon(s)"
[ "$applied" = "$(ls migrations/postgresql/*.sql | wc -l)" ] || { echo "FAIL: migrations applied $applied times"; exit 1; }
[ "$made" = 1 ] || { echo "FAIL: $made daemons made the first token"; exit 1; }
token=$(cat "$work"/d?/admin.token)

lb=$(BALANCER_UPLOADS=hash start_balancer "$work" "${ports[@]}")
export TOURSD_URL="http://127.0.0.1:$lb" TOURSD_TOKEN="$token"
# /metrics stays inside: not through the balancer; at a daemon, with its token only.
through=$(curl -s -o /dev/null -w '%{http_code}' "$TOURSD_URL/metrics")
bare=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${ports[0]}/metrics")
scraped=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$work/metrics.token")" "http://127.0.0.1:${ports[0]}/metrics")
[ "$through $bare $scraped" = "404 401 200" ] || { echo "FAIL: /metrics through nginx $through, at a daemon without its token $bare, with it $scraped"; exit 1; }
echo "scale-out: /metrics is 404 through nginx, 401 at a daemon without its token, 200 with it"
# A daemon whose key is not the deployment's does not start, and says so.
head -c 32 /dev/urandom > "$work/other.key"
if TOURSD_databaseUrl="$database" TOURSD_webhookKeyFile="$work/other.key" timeout 30 "$toursd" serve --config config/toursd-scale-out.json \
        --port 0 --data-dir "$work/other" 2> "$work/other.log"; then
    echo "FAIL: a daemon with another webhook key started"; exit 1
fi
grep -q "is not the one this deployment's daemons use" "$work/other.log" || { echo "FAIL: the other key's refusal: $(tail -n 3 "$work/other.log")"; exit 1; }
echo "scale-out: a daemon with another webhook key refused to start"

TOURSD_databaseUrl="$database" .venv/bin/python Tests/postgres/scaleout.py --across "$TOURSD_URL" "$token" "$toursd" "$work/d1" "${ports[@]}"
SCHEMATHESIS_EXAMPLES=${SCHEMATHESIS_EXAMPLES:-15} SCHEMATHESIS_EXCLUDE=/metrics bash Tests/contract/schemathesis.sh
bash Tests/contract/tus_interop.sh

# The IETF resumable-upload draft through the balancer (explicit creations give the upload's
# Location; whole uploads store as plain ones), and nginx's connections stay healthy: no
# answer it could not read, no upstream it gave up on.
before=$(wc -l < "$work/nginx/logs/access.log")
.venv/bin/python Tests/contract/resumable_draft.py suite "$TOURSD_URL" "$token" --no-interim
if grep -E "upstream sent|upstream prematurely|invalid status|no live upstreams" "$work/nginx/logs/error.log"; then
    echo "FAIL: nginx saw broken upstream answers"; exit 1
fi
bad=$(tail -n +$((before + 1)) "$work/nginx/logs/access.log" | awk '$9 >= 500' | wc -l)
[ "$bad" = 0 ] || { echo "FAIL: $bad requests through nginx were answered 5xx"; exit 1; }
echo "scale-out: the draft's uploads through nginx: healthy"

# And with 104s on and no proxy: two more daemons on the same database and blobs; an upload
# cut on one is resumed on the other.
for n in 4 5; do
    mkdir -p "$work/d$n"
    TOURSD_databaseUrl="$database" TOURSD_databasePoolSize=4 \
        "$toursd" serve --port 0 --data-dir "$work/d$n" 2> "$work/d$n.log" &
    pids+=($!)
done
p4=$(toursd_port "$work/d4.log") p5=$(toursd_port "$work/d5.log")
wait_for_url "http://127.0.0.1:$p4/healthz" >/dev/null
wait_for_url "http://127.0.0.1:$p5/healthz" >/dev/null
.venv/bin/python Tests/contract/resumable_draft.py suite "http://127.0.0.1:$p4" "$token" --second "http://127.0.0.1:$p5"

# The client library, through the balancer: capture and sync a property.
station="$work/station"
mkdir -p "$station"
tours_at() { "$tours" --config "$station/config.json" "$@"; }
tours_at init --server "$TOURSD_URL" --token "$token" --storage "$station/storage" >/dev/null
property=$(tours_at property create "Scaled villa" --floors 1)
printf '{"rooms": [{"name": "Kitchen", "outline": [[0,0],[4,0],[4,3],[0,3]], "height": 2.5}]}' > "$station/plan.json"
tours_at plan "$property" "$station/plan.json" --floor 0 >/dev/null
jpeg_like 3000000 "$station/pano.jpg"
tours_at panorama add "$property" "$station/pano.jpg" --floor 0 >/dev/null
tours_at sync >/dev/null
state=$(tours_at status "$property" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["sync"])')
[ "$state" = synced ] || { echo "FAIL: the station's property is $state, not synced"; exit 1; }
echo "scale-out: the tours command line synced a property through the balancer: $state"

# HAProxy on the docs' file checking /readyz, over the second daemon and two more: one whose
# path to the database is cut and mended, one stopped with SIGTERM (drainMs); no 5xx.
TOURSD_trustedProxies=127.0.0.1 \
    .venv/bin/python Tests/postgres/balancer_drill.py "$toursd" "$work" "$database" "$token" "${ports[1]}"

# Webhooks delivered by three daemons, one of them killed while they deliver: every event
# still reaches the receiver, in order.
.venv/bin/python Tests/postgres/scaleout.py --webhooks "$TOURSD_URL" "$token" "${pids[1]}"
# Last: a daemon killed in the middle of a resumable upload; the others complete it.
.venv/bin/python Tests/postgres/scaleout.py --kill "$TOURSD_URL" "$token" "${ports[0]}" "${pids[0]}"
for n in 1 2 3; do echo "scale-out: daemon $n answered $(grep -c 'msg=request' "$work/d$n.log" || true) requests"; done
echo "scale-out: PASS"
