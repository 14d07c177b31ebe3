#!/usr/bin/env bash
# make test's Swift tests, with a time limit: a test that hangs fails the run in minutes, not at
# CI's limit, and the run names the tests that had started and not ended. A crash prints the
# crashed thread's backtrace only (symbolicating every idle pool thread of a test process
# takes longer than the run). Arguments: the swift command, the time limit in seconds, then
# any of `swift test`'s own (a filter, the suites to skip).
set -uo pipefail
cd "$(dirname "$0")/../.."
swift=$1 limit=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# At most TEST_WIDTH tests at once (8): each may start a daemon with its pools, and more at
# once on two cores only queue (the pass took as long with every test started together, and
# held 1,500-2,300 threads). The tests' own blocking runs on TestThreads, not Swift's pool.
SWIFT_BACKTRACE=enable=yes,interactive=no,threads=crashed,images=none \
    timeout --kill-after=10 "$limit" "$swift" test --skip-build --experimental-maximum-parallelization-width "${TEST_WIDTH:-8}" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "FAIL: the Swift tests did not end within ${limit}s; started and not ended:" >&2
    # "◇ Test name() started." and "✔/✘ Test name() passed/failed ..." (not the run's own
    # line, nor each case of a parameterized test: its test ends once, with its cases counted).
    awk '/^◇ Test .* started\.$/ && !/^◇ Test (case |run started)/ { sub(/^◇ Test /, ""); sub(/ started\.$/, ""); open[$0]++ }
         /^(✔|✘) Test / && / (passed|failed) / { line = $0; sub(/^(✔|✘) Test /, "", line); sub(/ (passed|failed) .*$/, "", line); sub(/ with [0-9]+ test cases?$/, "", line); done[line]++ }
         END { for (name in open) if (open[name] > done[name] + 0) print "  " name }' "$log" >&2
fi
exit "$status"
