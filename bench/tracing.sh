#!/usr/bin/env bash
# What traces cost: GET /v1/properties/{id} (a token check and one read) on two toursd of the
# same build and settings, one sending every request's spans to a collector on loopback
# (otlpEndpoint, a Python sink that takes each POST), the other without traces; wrk -t2 -c64,
# the two taking turns for BENCH_ROUNDS rounds (3), medians printed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
[ -n "${TOURSD_BIN:-}" ] || build_release toursd

# The collector: answers every POST 200 and counts the spans' bytes it took.
sink_port=$(free_port)
python3 - "$sink_port" > "$work/sink.log" 2>&1 <<'PY' &
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *_): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
PY
pids+=($!)

declare -A port token
for name in plain traced; do
    mkdir -p "$work/$name"
    extra=()
    [ "$name" = traced ] && extra=(env TOURSD_otlpEndpoint="http://127.0.0.1:$sink_port/v1/traces")
    "${extra[@]}" "${TOURSD_BIN:-.build/release/toursd}" serve --config config/toursd.json --port 0 --data-dir "$work/$name/data" 2> "$work/$name/toursd.log" &
    pids+=($!)
    port[$name]=$(toursd_port "$work/$name/toursd.log")
    wait_for_url "http://127.0.0.1:${port[$name]}/healthz" >/dev/null
    token[$name]=$(cat "$work/$name/data/admin.token")
done
property=$(python3 -c 'import uuid; print(uuid.uuid4())')
for name in plain traced; do
    curl -fs -X PUT -H "Authorization: Bearer ${token[$name]}" -H "Content-Type: application/json" \
        -d '{"name":"Traced villa","floorCount":1}' "http://127.0.0.1:${port[$name]}/v1/properties/$property" >/dev/null
done

rounds=${BENCH_ROUNDS:-3}
for _ in $(seq 1 "$rounds"); do
    for name in plain traced; do
        wrk_figures "http://127.0.0.1:${port[$name]}/v1/properties/$property" "$work/wrk-$name.txt" \
            -H "Authorization: Bearer ${token[$name]}" >> "$work/$name.figures"
    done
done
dropped=$(curl -fs "http://127.0.0.1:${port[traced]}/metrics" | awk '/^toursd_trace_spans_dropped_total/ { print $2 }')

python3 - "$work/plain.figures" "$work/traced.figures" "$rounds" "${dropped:-?}" <<'PY'
import statistics, sys
def medians(path):
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
plain_rps, plain_p99 = medians(sys.argv[1])
traced_rps, traced_p99 = medians(sys.argv[2])
print(f"GET /v1/properties/{{id}}, traces off and on (OTLP/HTTP JSON to a loopback collector), wrk -t2 -c64, median of {sys.argv[3]} alternating rounds")
print(f"  {'toursd':<24}{'req/s':>10}{'p99 ms':>10}")
print(f"  {'without traces':<24}{plain_rps:>10.0f}{plain_p99:>10.2f}")
print(f"  {'every request traced':<24}{traced_rps:>10.0f}{traced_p99:>10.2f}")
print(f"  ratio traced/untraced: req/s {traced_rps / plain_rps:.2f}x (target >= 0.85x), p99 {traced_p99 / plain_p99:.2f}x; "
      f"spans dropped (otlpQueueSpans full): {sys.argv[4]}")
PY
