#!/usr/bin/env bash
# The service's tests again, on PostgreSQL with every blob in an S3 bucket: once on moto and
# once on rclone serve s3 (store.sh starts each on a loopback port), each test harness on a
# fresh database and a fresh bucket (ServiceHarness reads TOURSD_TEST_POSTGRES and
# TOURSD_TEST_S3 with the AWS variables). Left out (Tests/postgres/suites.sh): what the
# PostgreSQL pass leaves out, the suites with stores of their own (the PostgreSQL pass runs
# them, on the same stores), and the tests of the blob folder itself (its start-up sweep,
# bytes written into its partial files by hand), which the first pass ran.
set -euo pipefail
cd "$(dirname "$0")/../.."
pg=$(mktemp -d /tmp/toursd-pg.XXXXXX)
store=""
cleanup() {
    [ -n "$store" ] && bash Tests/s3/store.sh stop "$store"
    bash Tests/postgres/cluster.sh stop "$pg"
}
trap cleanup EXIT
url=$(bash Tests/postgres/cluster.sh start "$pg")
. Tests/postgres/suites.sh
folder="filesLeftByACrashAreRemovedAndStoredOnesKept|theOffsetAndItsDigestSurviveARestart|anUploadWhosePartialFileWasLostInACrashResumesFromWhatItHolds|anOffsetAskedWhileACutPatchStillEndsIsTheOneItLeaves"
for kind in moto rclone; do
    store=$(mktemp -d /tmp/toursd-s3.XXXXXX)
    vars=$(bash Tests/s3/store.sh start "$kind" "$store")
    echo "The service's tests on PostgreSQL and $kind: $vars"
    env $vars TOURSD_TEST_S3="$kind" TOURSD_TEST_POSTGRES="$url" bash Tests/repository/swift_test.sh swift 900 --filter TourServiceTests --skip "$own|$own_stores|$folder"
    bash Tests/s3/store.sh stop "$store"
    store=""
done
