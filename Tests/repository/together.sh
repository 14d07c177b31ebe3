#!/usr/bin/env bash
# Runs make test's steps that wait more than they work side by side, one job per argument (a
# command line for bash), each on its own: its output kept and printed whole once it ends, in
# the order given, with its time. Fails when any job failed, after every job has ended. For
# steps whose cores were half idle alone (timed.sh's figure) and that share nothing: ports
# the OS picks, folders of their own.
set -uo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
for job in "$@"; do
    index=${#pids[@]}
    (
        start=$EPOCHREALTIME
        bash -c "$job" > "$out/$index.log" 2>&1
        status=$?
        awk -v start="$start" -v end="$EPOCHREALTIME" -v job="${job:0:100}" -v status="$status" \
            'BEGIN { printf "[together] %7.1f s  %s%s\n", end - start, job, (status != 0 ? "  (exit " status ")" : "") }' > "$out/$index.time"
        exit "$status"
    ) &
    pids+=($!)
done
failed=0
for index in "${!pids[@]}"; do
    wait "${pids[$index]}" || failed=1
    cat "$out/$index.log" "$out/$index.time"
done
exit "$failed"
