#!/usr/bin/env bash
# make test: the boundaries the module tree promises (docs/storage.md "The service's modules").
# - The deployment is decided once (NTTourService/Composition/Deployment.swift) and the
#   composition builds the parts from it: no other source asks the configuration which
#   database it runs on, and no store is downcast to learn what it is.
# - The stores know no HTTP (NTServiceStorage imports no HTTP layer: a blob store receives a
#   ByteStream) and fail with the storage layer's own errors (a StorageError, never the API's
#   server failures); the service maps storage failures by their kind, never a backend's error
#   by name. Nothing under storage names the composition or the viewer.
# - The use cases know no HTTP (NTTourUseCases, the uploads' sessions and use case, the
#   webhooks' and the viewer's use cases): the routes parse requests into their calls.
# - Routes call use cases: nothing in a Routes/ folder names a store.
# - One decision per request: the access rules read the command, never a protocol's headers
#   (nothing under NTServiceHTTP/Access or Routing reads tus's); no trap on a request path
#   (no preconditionFailure or fatalError in the service's modules); no hub type (a *Service
#   or *Context) extended outside the folder that declares it.
# - The configuration in sections: at most 6 files name the whole settings type.
# - No module holds more than a quarter of the lines in Sources/.
set -euo pipefail
cd "$(dirname "$0")/../.."
service=(NTServiceModel NTServiceStorage NTTourUseCases NTServiceHTTP NTUploads NTWebhooks NTViewerService NTTourService)
failed=0
fail() {
    echo "FAIL: $1" >&2
    echo "$2" >&2
    failed=1
}
found() { grep -rnE "$@" --include='*.swift' 2>/dev/null || true; }

decided=$(found 'databaseUrl\.isEmpty|as[?!] *(BucketBlobStore|DirectoryBlobStore)\b' Sources \
    | grep -v '^Sources/NTTourService/Composition/Deployment.swift:' || true)
[ -z "$decided" ] || fail "a backend decided outside Deployment, or a store downcast:" "$decided"

http=$(found '^\s*(@testable\s+)?import\s+(NTHTTPCore|NTServiceHTTP)\b' Sources/NTServiceStorage Sources/NTSQLKit Sources/NTSQLiteDB Sources/NTPostgresDB Sources/NTObjectStorage)
[ -z "$http" ] || fail "the storage layer imports the HTTP layer:" "$http"

upward=$(found '^\s*import\s+(NTTourViewer|NTViewerService|NTTourService|NTTourUseCases|NTUploads|NTWebhooks)\b|\b(SyncService|ServiceContext|ViewerService)\b' Sources/NTServiceStorage)
[ -z "$upward" ] || fail "storage names the composition or the viewer:" "$upward"

useCases=$(found '^\s*(@testable\s+)?import\s+(NTHTTPCore|NTServiceHTTP)\b' Sources/NTTourUseCases Sources/NTUploads/Sessions Sources/NTUploads/Uploads.swift \
    Sources/NTWebhooks/UseCases Sources/NTViewerService/UseCases)
[ -z "$useCases" ] || fail "a use case imports the HTTP layer (parse the request in its route):" "$useCases"

apiFailures=$(found 'ServiceError\(\.(internal|unavailable|insufficientStorage)|throws\(ServiceError\)' Sources/NTServiceStorage)
[ -z "$apiFailures" ] || fail "a store fails with the API's error instead of a StorageError:" "$apiFailures"

byName=$(for module in "${service[@]}"; do found '(as[?!]?|is) *(SQLiteError|PostgresError|DatabaseFileGone)\b' "Sources/$module"; done)
[ -z "$byName" ] || fail "the service looks at a backend's error by name (ask its storageError's kind):" "$byName"

stores=$(find Sources -type d -name Routes -path 'Sources/NT*' -print0 | xargs -0 -I{} grep -rnE '\b[A-Z][A-Za-z]*Store\b' {} --include='*.swift' || true)
[ -z "$stores" ] || fail "a route names a store (call a use case):" "$stores"

tus=$(found -i 'upload-metadata|tus-resumable|upload-length|TusHeaders|UploadMetadata' Sources/NTServiceHTTP/Access Sources/NTServiceHTTP/Routing Sources/NTServiceHTTP/Authentication)
[ -z "$tus" ] || fail "an access rule reads a protocol's headers itself (decide on the parsed command):" "$tus"

traps=$(for module in "${service[@]}"; do found '\b(preconditionFailure|fatalError)\(' "Sources/$module"; done)
[ -z "$traps" ] || fail "a trap in the service (throw an error instead):" "$traps"

# A hub type extended away from the folder that declares it.
hubs=""
while IFS=: read -r file _ line; do
    type=$(sed -E 's/^.*extension ([A-Za-z]+).*$/\1/' <<<"$line")
    declared=$(grep -rlE "^(public |package )?(final )?(class|struct|enum) $type\b" "${service[@]/#/Sources/}" --include='*.swift' | head -1)
    if [ -n "$declared" ] && [ "$(dirname "$declared")" != "$(dirname "$file")" ]; then hubs+="$file extends $type (declared in $declared)"$'\n'; fi
done < <(for module in "${service[@]}"; do found '^(public |package )?extension [A-Za-z]+(Service|Context)\b' "Sources/$module"; done)
[ -z "$hubs" ] || fail "a hub type extended outside its folder:" "$hubs"

settings=$(grep -rlw ToursdConfig Sources --include='*.swift' | sort)
[ "$(wc -l <<<"$settings")" -le 6 ] || fail "more than 6 files name the whole settings type (hand each part its section):" "$settings"

total=$(find Sources -name '*.swift' -print0 | xargs -0 cat | wc -l)
sizes=""
for folder in Sources/*/; do
    module=$(basename "$folder")
    lines=$(find "$folder" -name '*.swift' -print0 | xargs -0 cat 2>/dev/null | wc -l)
    [[ " ${service[*]} " == *" $module "* ]] && sizes+="$module $lines; "
    [ $((lines * 4)) -le "$total" ] || fail "$module holds $lines of the $total lines in Sources/, more than a quarter:" "split it by what it does"
done

[ "$failed" = 0 ] || exit 1
echo "layers: the deployment decided once, no store downcast, no HTTP in the use cases or the stores, routes call use cases,"
echo "  access on commands, no trap, no hub extended away, $(wc -l <<<"$settings") files name the settings, modules of $total lines: $sizes"
