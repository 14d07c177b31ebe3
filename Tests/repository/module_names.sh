#!/usr/bin/env bash
# make test: every module a host's package graph can receive carries our prefix (NT, CNT for
# the C libraries; NoughtyTours, the library itself), so that the library sits beside
# swift-log's Logging, Vapor's SQLKit or sqlite-nio's CSQLite. Executables and test code are
# in no host's graph.
set -euo pipefail
cd "$(dirname "$0")/../.."
unprefixed=$(swift package dump-package | python3 -c '
import json, sys
for target in json.load(sys.stdin)["targets"]:
    if target["type"] in ("regular", "system") and not (target.get("path") or "").startswith("Tests/"):
        if not target["name"].startswith(("NT", "CNT", "NoughtyTours")):
            print("  " + target["name"])
')
if [ -n "$unprefixed" ]; then
    echo "FAIL: modules without our prefix (NT, CNT):" >&2
    echo "$unprefixed" >&2
    exit 1
fi
echo "module names: every library and system module carries our prefix"
