#!/usr/bin/env bash
# make test: the boundaries the folder tree promises.
# - The deployment is decided once (Sources/NTTourService/Composition/Deployment.swift) and the
#   composition builds the parts from it: no other source asks the configuration which
#   database it runs on, and no store is downcast to learn what it is.
# - The use cases know no HTTP: nothing under UseCases/ or Uploads/ imports the HTTP layer (the
#   routes parse requests into their calls and write their answers).
# - The stores know no HTTP: nothing under Storage/ imports the HTTP layer (a blob store
#   receives a ByteStream), and fail with the storage layer's own errors: a store throws no
#   server failure of the API's (ServiceError internal, unavailable, insufficientStorage) but a
#   StorageError, and the service maps storage failures by their kind, never a backend's error
#   by name.
set -euo pipefail
cd "$(dirname "$0")/../.."
failed=0
decided=$(grep -rnE 'databaseUrl\.isEmpty|as[?!] *(BucketBlobStore|DirectoryBlobStore)\b' Sources --include='*.swift' \
    | grep -v '^Sources/NTTourService/Composition/Deployment.swift:' || true)
if [ -n "$decided" ]; then
    echo "FAIL: a backend decided outside Deployment, or a store downcast:" >&2
    echo "$decided" >&2
    failed=1
fi
http=$(grep -rnE '^\s*(@testable\s+)?import\s+NTHTTPCore\b' Sources/NTTourService/Storage Sources/NTSQLKit Sources/NTSQLiteDB Sources/NTPostgresDB Sources/NTObjectStorage || true)
if [ -n "$http" ]; then
    echo "FAIL: the storage layer imports the HTTP layer:" >&2
    echo "$http" >&2
    failed=1
fi
useCases=$(grep -rnE '^\s*(@testable\s+)?import\s+NTHTTPCore\b' Sources/NTTourService/UseCases Sources/NTTourService/Uploads || true)
if [ -n "$useCases" ]; then
    echo "FAIL: a use case imports the HTTP layer (parse the request in its route):" >&2
    echo "$useCases" >&2
    failed=1
fi
apiFailures=$(grep -rnE 'ServiceError\(\.(internal|unavailable|insufficientStorage)|throws\(ServiceError\)' Sources/NTTourService/Storage || true)
if [ -n "$apiFailures" ]; then
    echo "FAIL: a store fails with the API's error instead of a StorageError:" >&2
    echo "$apiFailures" >&2
    failed=1
fi
byName=$(grep -rnE '(as[?!]?|is) *(SQLiteError|PostgresError|DatabaseFileGone)\b' Sources/NTTourService || true)
if [ -n "$byName" ]; then
    echo "FAIL: the service looks at a backend's error by name (ask its storageError's kind):" >&2
    echo "$byName" >&2
    failed=1
fi
[ "$failed" = 0 ] || exit 1
echo "layers: the deployment decided once, no store downcast, no HTTP in the use cases or the stores, storage errors by kind"
