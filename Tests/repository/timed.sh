#!/usr/bin/env bash
# make test's shell: runs each recipe line as make's own shell would, then says how long it
# took, so that CI's output shows where the test loop's minutes go.
start=$EPOCHREALTIME
bash "$@"
status=$?
command=${*: -1}
awk -v start="$start" -v end="$EPOCHREALTIME" -v command="${command:0:100}" -v status="$status" \
    'BEGIN { printf "[make test] %7.1f s  %s%s\n", end - start, command, (status != 0 ? "  (exit " status ")" : "") }' >&2
exit "$status"
