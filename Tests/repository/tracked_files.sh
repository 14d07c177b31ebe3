#!/usr/bin/env bash
# make test: no tracked file over 1 MiB (a bench upload, a log, a data set committed by
# mistake), except those named in Tests/repository/large-files.txt; and no scratch directory or
# fuzzer artifact tracked at all.
set -euo pipefail
cd "$(dirname "$0")/../.."
limit=$((1 << 20))
allowed=Tests/repository/large-files.txt
failures=0
while IFS= read -r -d '' path; do
    [ -f "$path" ] || continue
    size=$(stat -c %s "$path")
    if [ "$size" -gt "$limit" ] && ! grep -qxF "$path" "$allowed"; then
        echo "FAIL: $path is $size bytes, over 1 MiB and not in $allowed" >&2
        failures=$((failures + 1))
    fi
    case "$path" in
        bench.*/*|crash-*|leak-*|timeout-*|oom-*|slow-unit-*)
            echo "FAIL: $path is scratch (a bench directory or a fuzzer artifact)" >&2
            failures=$((failures + 1)) ;;
    esac
done < <(git ls-files -z)
[ "$failures" -eq 0 ] || exit 1
echo "tracked files: none over 1 MiB outside $allowed, no scratch"
