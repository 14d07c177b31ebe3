#!/usr/bin/env bash
# nginx as a round-robin balancer in front of toursd daemons (bench/lib.sh's start_balancer),
# for tests that start their daemons themselves (ServiceHarness, TOURSD_TEST_BALANCED).
#   balancer.sh start DIR PORT...   prints the balancer's port
#   balancer.sh stop DIR            stops it and removes DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
command=$1 dir=$2
shift 2
case "$command" in
start)
    mkdir -p "$dir"
    start_balancer "$dir" "$@"
    ;;
stop)
    stop_nginx "$dir"
    for _ in $(seq 1 100); do [ -f "$dir/nginx/nginx.pid" ] || break; sleep 0.05; done
    rm -rf "$dir"
    ;;
*)
    echo "usage: balancer.sh start DIR PORT... | stop DIR" >&2
    exit 2
    ;;
esac
