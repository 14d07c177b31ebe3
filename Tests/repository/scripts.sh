#!/usr/bin/env bash
# The viewer's script parts (Sources/NTTourViewer/Assets/script/*.js, compiled into toursd as
# one function's body) each parse as JavaScript: `node --check` of every part alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
parts=(Sources/NTTourViewer/Assets/script/*.js)
[ ${#parts[@]} -gt 0 ] || { echo "scripts: no viewer script parts found" >&2; exit 1; }
for part in "${parts[@]}"; do
    node --check "$part" || { echo "scripts: $part does not parse" >&2; exit 1; }
done
echo "scripts: ${#parts[@]} viewer script parts parse"
