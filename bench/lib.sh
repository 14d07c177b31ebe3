# Helpers the bench scripts share: free ports, waiting for a server, wrk figures, peak RSS.

# A free TCP port on 127.0.0.1, chosen by the OS.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits (at most 10 s) until toursd wrote its "listening on" line to $1; prints the port.
toursd_port() {
    for _ in $(seq 1 100); do
        port=$(grep -o 'listening on http://[^ ]*' "$1" 2>/dev/null | sed 's/.*://')
        if [ -n "$port" ]; then echo "$port"; return 0; fi
        sleep 0.1
    done
    echo "toursd did not start; its log:" >&2
    cat "$1" >&2
    return 1
}

# Waits (at most 10 s) until a URL answers.
wait_for_url() {
    for _ in $(seq 1 100); do
        curl -fs -o /dev/null "$1" && return 0
        sleep 0.1
    done
    echo "$1 did not answer" >&2
    return 1
}

# Runs wrk and prints "REQ_PER_SEC P99_MS".
wrk_figures() {
    wrk -t2 -c64 -d"${BENCH_SECONDS:-10}"s --latency "$1" > "$2" 2>&1
    python3 - "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", text).groups()
p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
if errors:
    print(f"wrk saw {errors.group(1)} error responses", file=sys.stderr)
print(f"{rps:.0f} {p99:.3f}")
PY
}

# Peak resident set size of a process in MB (VmHWM).
peak_rss_mb() {
    awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}
