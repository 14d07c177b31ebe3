#!/usr/bin/env bash
# The suites that start nothing (no process, server, harness or queue: the suites without a
# `.hangGuard`), as one `swift test --filter`/`--skip` pattern. make test runs them in a pass of
# their own before the others, so that a test of pure logic is answered in seconds instead of
# queueing behind harness tests for a slot of the width-limited pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -rhoE '^@Suite(\([^)]*\))? struct [A-Za-z0-9_]+' Tests --include='*.swift' \
    | grep -v 'hangGuard' | sed -E 's/.* struct //' | sort -u | sed -E 's|^|\\.|; s|$|/|' | paste -sd'|' -
