#!/usr/bin/env bash
# The service's tests again, on PostgreSQL: a cluster of the run's own (cluster.sh), each
# test harness on a fresh database of it (ServiceHarness reads TOURSD_TEST_POSTGRES). Tests
# of SQLite itself (its files, its migrations) stay on SQLite.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/toursd-pg.XXXXXX)
trap 'bash Tests/postgres/cluster.sh stop "$dir"' EXIT
url=$(bash Tests/postgres/cluster.sh start "$dir")
echo "PostgreSQL for the service's tests: $url"
TOURSD_TEST_POSTGRES="$url" swift test --skip-build --filter TourServiceTests
