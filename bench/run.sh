#!/usr/bin/env bash
# make bench: every benchmark, each figure printed beside its reference from the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release toursd DurableReceiver DocumentBench ClientBench
bash bench/http.sh
echo
bash bench/tracing.sh
echo
bash bench/grants.sh
echo
bash bench/heic.sh
echo
bash bench/mixed_load.sh
echo
bash bench/attack.sh
echo
bash bench/uploads.sh
echo
bash bench/s3.sh
echo
bash bench/resumable.sh
echo
bash bench/outbox.sh
echo
bash bench/webhooks.sh
echo
bash bench/documents.sh
echo
bash bench/viewer.sh
echo
bash bench/tiles.sh
echo
bash bench/walk.sh
echo
bash bench/scaleout.sh
echo
bash bench/storage.sh
echo
.build/release/DocumentBench
echo
.build/release/ClientBench
echo
bash bench/client_sync.sh
echo
bash bench/slow_clients.sh
