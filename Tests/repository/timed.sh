#!/usr/bin/env bash
# make test's shell: runs each recipe line as make's own shell would, then says how long it
# took and how busy the machine's cores were meanwhile (every process's, the servers a step
# starts in the background included), so that CI's output shows where the test loop's
# minutes go, and which steps wait rather than work.
busy_and_total() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
read -r busy_before total_before < <(busy_and_total)
start=$EPOCHREALTIME
bash "$@"
status=$?
read -r busy_after total_after < <(busy_and_total)
command=${*: -1}
awk -v start="$start" -v end="$EPOCHREALTIME" -v busy=$((busy_after - busy_before)) -v total=$((total_after - total_before)) \
    -v command="${command:0:100}" -v status="$status" \
    'BEGIN { printf "[make test] %7.1f s  cores %3.0f%% busy  %s%s\n", end - start, (total > 0 ? 100 * busy / total : 0), command, (status != 0 ? "  (exit " status ")" : "") }' >&2
exit "$status"
