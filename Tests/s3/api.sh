#!/usr/bin/env bash
# The service's tests on PostgreSQL with every blob in an S3 bucket (moto, which store.sh
# starts on a loopback port), each test harness on a fresh database and a fresh bucket
# (ServiceHarness reads TOURSD_TEST_POSTGRES and TOURSD_TEST_S3 with the AWS variables): the
# API suite's second deployment, after SQLite and the folder. Left out
# (Tests/postgres/suites.sh): the suites that never open a harness, and the tests of the blob
# folder itself (its start-up sweep, bytes written into its partial files by hand), which the
# first pass ran. The suites that start stores of their own run after, on PostgreSQL alone.
# rclone's serve s3 is the scale-out drill's store; the blob port's contract
# (BlobStoreContractTests) holds on the folder, moto and rclone alike.
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
folder="filesLeftByACrashAreRemovedAndStoredOnesKept|theOffsetAndItsDigestSurviveARestart|anOffsetRecordACrashTookBackIsTheFilesToSay|anUploadWhosePartialFileWasLostInACrashResumesFromWhatItHolds|anOffsetAskedWhileACutPatchStillEndsIsTheOneItLeaves"
store=$(mktemp -d /tmp/toursd-s3.XXXXXX)
vars=$(bash Tests/s3/store.sh start moto "$store")
echo "The service's tests on PostgreSQL and moto: $vars"
env $vars TOURSD_TEST_S3=moto TOURSD_TEST_POSTGRES="$url" bash Tests/repository/swift_test.sh swift 900 --filter TourServiceTests --skip "$own|$own_stores|$folder"
bash Tests/s3/store.sh stop "$store"
store=""
echo "The suites with stores of their own, on PostgreSQL"
TOURSD_TEST_POSTGRES="$url" bash Tests/repository/swift_test.sh swift 900 --filter "$own_stores"
