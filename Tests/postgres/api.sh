#!/usr/bin/env bash
# The service's tests again, on PostgreSQL: a cluster of the run's own (cluster.sh), each
# test harness on a fresh database of it (ServiceHarness reads TOURSD_TEST_POSTGRES). Tests
# of SQLite itself (its files, its migrations) stay on SQLite, and suites without a harness
# are left out. Then once more with every
# harness three daemons (a data folder each, one database, one blob folder) behind nginx as a
# round-robin balancer (TOURSD_TEST_BALANCED): every request may land on any daemon. Tests of
# what one daemon does by itself (its HTTP layer, metrics, start-up, memory) ask for one.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/toursd-pg.XXXXXX)
trap 'bash Tests/postgres/cluster.sh stop "$dir"' EXIT
url=$(bash Tests/postgres/cluster.sh start "$dir")
echo "PostgreSQL for the service's tests: $url"
. Tests/postgres/suites.sh
TOURSD_TEST_POSTGRES="$url" bash Tests/repository/swift_test.sh swift 900 --filter TourServiceTests --skip "$own"
echo "The service's tests through three daemons behind nginx"
# SlowDiskTests run one daemon even here (their stall hook is the process's): the first pass ran
# them on PostgreSQL already, and beside this pass's load their stall outlasts the body timeout.
TOURSD_TEST_POSTGRES="$url" TOURSD_TEST_BALANCED=3 bash Tests/repository/swift_test.sh swift 900 --filter TourServiceTests --skip "$own|$own_stores|SlowDiskTests"
