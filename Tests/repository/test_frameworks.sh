#!/usr/bin/env bash
# make test: no regular or executable target imports a test framework (Testing, XCTest). The
# toolchain has none for the static release build, so such a target breaks `swift build -c
# release` of the package (make run builds its products by name, and would not notice one
# outside them). Test support that needs Testing is a test target (Tests/TestTraits).
set -euo pipefail
cd "$(dirname "$0")/../.."
found=$(swift package dump-package | python3 -c '
import json, pathlib, re, sys
package = json.load(sys.stdin)
for target in package["targets"]:
    if target["type"] not in ("regular", "executable"):
        continue
    name = target["name"]
    folder = pathlib.Path(target.get("path") or f"Sources/{name}")
    for source in sorted(folder.rglob("*.swift")):
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*(@testable\s+)?import\s+(Testing|XCTest)\b", line):
                print(f"  {name}: {source}:{number}: {line.strip()}")
')
if [ -n "$found" ]; then
    echo "FAIL: regular targets import a test framework (make them test targets, or move that code):" >&2
    echo "$found" >&2
    exit 1
fi
echo "test frameworks: imported by test targets only"
