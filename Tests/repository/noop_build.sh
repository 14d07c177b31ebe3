#!/usr/bin/env bash
# make test, after its builds: building again with nothing changed compiles nothing (a build
# that changes nothing must not make a newcomer wait). The build command follows: SWIFT ARGS...
set -euo pipefail
cd "$(dirname "$0")/../.."
output=$("$@" 2>&1)
if grep -qE '^\[[0-9]+/[0-9]+\] Compiling' <<<"$output"; then
    echo "FAIL: a build with nothing changed compiled again:" >&2
    grep -E 'Compiling' <<<"$output" | head -20 >&2
    exit 1
fi
echo "no-op build: nothing compiled ($(tail -1 <<<"$output"))"
