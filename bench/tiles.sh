#!/usr/bin/env bash
# Huge panoramas (issue 33): a 16384 × 8192 panorama in headless Chromium, time to its first
# drawn frame from its tiles beside the single image (the whole panorama as one 8192 texture),
# and beside what the viewer does without tiles (the 1024 preview, then the 4096), each from a
# toursd of its own;
# and the CPU time toursd took to cut its tiles beside Pannellum's tool chain on the same
# image (hugin's nona for the six faces, then the tiling with Pillow as its generate.py does).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
ports=()
for variant in tiles single fallback; do
    mkdir -p "$work/$variant"
    .venv/bin/python - "$variant" > "$work/$variant/toursd.json" <<'PY'
import json, sys
config = json.load(open("config/toursd.json"))
if sys.argv[1] != "tiles":
    config["tileMinWidth"] = 1 << 20  # never tiled
if sys.argv[1] == "single":
    # The viewer's one image is the whole panorama as one texture, as large as one commonly
    # is (8192 × 4096: many phones' GPUs hold no larger), with no smaller one drawn first.
    config["previewWidths"] = "8192"
    config["maxPreviewDecodeBytes"] = 1 << 30
print(json.dumps(config))
PY
    TOURSD_CONFIG="$work/$variant/toursd.json" start_toursd "$work/$variant"
    pids+=("$TOURSD_PID")
    ports+=("$TOURSD_PORT")
done
.venv/bin/python bench/tiles.py "$work" "${ports[0]}" "${ports[1]}" "${ports[2]}"
