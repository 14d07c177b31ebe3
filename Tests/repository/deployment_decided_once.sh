#!/usr/bin/env bash
# make test: the deployment is decided once (Sources/NTTourService/Composition/Deployment.swift)
# and the composition builds the parts from it: no other source asks the configuration which
# database it runs on, and no store is downcast to learn what it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
found=$(grep -rnE 'databaseUrl\.isEmpty|as[?!] *(BucketBlobStore|DirectoryBlobStore)\b' Sources --include='*.swift' \
    | grep -v '^Sources/NTTourService/Composition/Deployment.swift:' || true)
if [ -n "$found" ]; then
    echo "FAIL: a backend decided outside Deployment, or a store downcast:" >&2
    echo "$found" >&2
    exit 1
fi
echo "deployment: decided once, no store downcast"
