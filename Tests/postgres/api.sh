#!/usr/bin/env bash
# The service's tests across daemons: every test's harness three daemons (a data folder each,
# one PostgreSQL database, one blob folder) behind nginx as a round-robin balancer
# (TOURSD_TEST_BALANCED): every request may land on any daemon. A cluster of the run's own
# (cluster.sh), each harness on a fresh database of it (ServiceHarness reads
# TOURSD_TEST_POSTGRES). Tests of what one daemon does by itself (its HTTP layer, metrics,
# start-up, memory) ask for one. The API suite on PostgreSQL with one daemon runs in
# Tests/s3/api.sh, with its blobs in a bucket.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/toursd-pg.XXXXXX)
trap 'bash Tests/postgres/cluster.sh stop "$dir"' EXIT
url=$(bash Tests/postgres/cluster.sh start "$dir")
. Tests/postgres/suites.sh
echo "The service's tests through three daemons behind nginx, on PostgreSQL: $url"
# SlowDiskTests run one daemon (their stall hook is the process's): beside this pass's load
# their stall outlasts the body timeout; the first pass and the PostgreSQL pass run them.
# Four tests at a time, not eight: each holds three daemons, and twelve daemons' threads (about
# a dozen each) keep the test process under 256 threads where twenty-four did not.
TEST_WIDTH=4 TOURSD_TEST_POSTGRES="$url" TOURSD_TEST_BALANCED=3 bash Tests/repository/swift_test.sh swift 900 --filter TourServiceTests --skip "$own|$own_stores|SlowDiskTests"
