# Which TourServiceTests suites the passes after the first leave out (sourced by
# Tests/postgres/api.sh and Tests/s3/api.sh). Each is run where its store matters, once.
# Suites that never open a harness (toursd processes of their own on SQLite, parsing, the
# config, pure logic): the first pass ran them; again they would only add load.
own="LockOrderTests|QueryPlanRuleTests|BackupTests|OrphanSweepTests|CrashPointTests|CrashSafetyTests|NoBlockingWaitTests|RequestParsingTests|ServiceErrorTests|BearerTokenTests|ToursdBinaryTests|ToursdConfigTests|BucketSweepPlanTests|PartDigestsTests|ResumableDraftTests|WaitersTests|WebhookRulesTests|UploadSessionsTests|StoreAwayTests|BlobStoreContractTests"
# Suites that start S3 servers of their own, each harness alone: Tests/s3/api.sh runs them on
# PostgreSQL; through the balancer or beside another store they would do the same again.
own_stores="BucketStoreTests|BlobCopyTests"
