# Helpers the bench scripts share: builds, free ports, waiting for a server, wrk figures, peak RSS.

# A command substitution fails the script as the command in it does: a peer or a reference
# that cannot start, or a request that fails, ends the bench with its error, never a figure.
shopt -s inherit_errexit

# Builds the release products named with make build, the one release build (a no-op when they
# are current); the build's output is shown only when it fails.
build_release() {
    local log
    log=$(mktemp)
    if ! make --no-print-directory build PRODUCTS="$*" > "$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "bench: cannot build $*" >&2
        return 1
    fi
    rm -f "$log"
}

# Waits (at most 10 s) until file $1 holds a line (a server's port); prints it, or fails
# naming $2, the server.
port_from_file() {
    for _ in $(seq 1 200); do
        if [ -s "$1" ]; then head -1 "$1"; return 0; fi
        sleep 0.05
    done
    echo "bench: $2 did not start (no port in $1)" >&2
    return 1
}

# A free TCP port on 127.0.0.1, chosen by the OS.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits (at most 10 s) until toursd wrote its "listening on" line to $1; prints the port.
toursd_port() {
    for _ in $(seq 1 100); do
        port=$(grep -o 'listening on http://[^ ]*' "$1" 2>/dev/null | sed 's/.*://' || true)
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

# Runs wrk on URL $1 (output kept in $2, further wrk arguments after) and prints
# "REQ_PER_SEC P99_MS"; WRK_CONNECTIONS connections (64 by default).
wrk_figures() {
    local url=$1 out=$2
    shift 2
    wrk -t2 -c"${WRK_CONNECTIONS:-64}" -d"${BENCH_SECONDS:-10}"s --latency "$@" "$url" > "$out" 2>&1
    python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", text).groups()
p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
connect = re.search(r"Socket errors: connect (\d+)", text)
if errors or (connect and int(connect.group(1)) > 0):
    print(f"bench: wrk saw failed requests ({sys.argv[1]}):\n{text}", file=sys.stderr)
    sys.exit(1)
print(f"{rps:.0f} {p99:.3f}")
PY
}

# Peak resident set size of a process in MB (VmHWM).
peak_rss_mb() {
    awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

# Starts nginx on 127.0.0.1 in $1 (its own config): /healthz is a static file with toursd's
# /healthz body, /dav/ takes PUTs into $1/nginx/html/dav. Prints its port; its pid is in
# $1/nginx/nginx.pid.
start_nginx() {
    local dir="$1/nginx" port
    port=$(free_port)
    mkdir -p "$dir/html/dav" "$dir/logs" "$dir/tmp"
    printf '%s' '{"status":"ok"}' > "$dir/html/healthz"
    cat > "$dir/nginx.conf" <<CONF
worker_processes auto;
user root root;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log $dir/logs/access.log;
    default_type application/json;
    client_body_temp_path $dir/tmp;
    server {
        listen 127.0.0.1:$port;
        root $dir/html;
        location /dav/ {
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
        }
    }
}
CONF
    nginx -c "$dir/nginx.conf" >/dev/null 2>&1
    wait_for_url "http://127.0.0.1:$port/healthz" >/dev/null
    echo "$port"
}

stop_nginx() {
    [ -f "$1/nginx/nginx.pid" ] && kill "$(cat "$1/nginx/nginx.pid")" 2>/dev/null || true
}

# Starts toursd ($TOURSD_BIN, the release build by default; $TOURSD_CONFIG, config/toursd.json
# by default) with data in $1/data and its log
# in $1/toursd.log; sets TOURSD_PID and TOURSD_PORT.
start_toursd() {
    [ -n "${TOURSD_BIN:-}" ] || build_release toursd
    "${TOURSD_BIN:-.build/release/toursd}" serve --config "${TOURSD_CONFIG:-config/toursd.json}" --port 0 --data-dir "$1/data" 2> "$1/toursd.log" &
    TOURSD_PID=$!
    TOURSD_PORT=$(toursd_port "$1/toursd.log")
    wait_for_url "http://127.0.0.1:$TOURSD_PORT/healthz"
}

# After a phase of uploads: what they wrote on the disk (nginx's DAV PUTs are not fsynced:
# gigabytes in the page cache) and toursd's processing of what it stored (started with
# start_toursd), done before the next measurement, so that no figure pays for the phase before
# it. Bounded: at most 60 s of processing.
settle_toursd() {
    sync
    local busy
    for _ in $(seq 1 300); do
        busy=$(curl -fs "http://127.0.0.1:$TOURSD_PORT/metrics" | awk '/^toursd_(panoramas_processing|previews_waiting) / { n += $2 } END { print n + 0 }')
        [ "$busy" = 0 ] && break
        sleep 0.2
    done
    sync
}

# nginx in $1/nginx as a round-robin balancer over the toursd ports after $1, bodies streamed
# through; a request whose daemon cannot be reached goes to the next (it never reached the
# dead one). Prints its port; stop it with stop_nginx $1.
# The server block is the docs' own, config/nginx/toursd-proxy.conf, included as it is; the
# upstreams are the daemons on loopback. An upload's requests go where the docs send them (one
# daemon per upload, BALANCER_UPLOADS=hash), or round robin like every other request (the
# default: a test of "any daemon answers any request" wants them spread).
start_balancer() {
    local dir=$1/nginx port upstreams="" pinning=""
    shift
    for backend in "$@"; do upstreams="$upstreams server 127.0.0.1:$backend;"; done
    [ "${BALANCER_UPLOADS:-round-robin}" = hash ] && pinning='hash $request_uri consistent;'
    port=$(free_port)
    mkdir -p "$dir/logs" "$dir/tmp"
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1; pid $dir/nginx.pid; error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http { access_log $dir/logs/access.log; client_body_temp_path $dir/tmp;
  upstream toursd { $upstreams keepalive 64; }
  upstream toursd_by_upload { $pinning $upstreams keepalive 64; }
  server { listen 127.0.0.1:$port; include $(pwd)/config/nginx/toursd-proxy.conf; } }
CONF
    # nginx outlives this function: it must not hold its caller's pipes or other descriptors
    # (Foundation's Process waits for every holder of its own).
    if ! (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        nginx -c "$dir/nginx.conf" </dev/null >/dev/null 2>"$dir/logs/start.log"
    ); then
        cat "$dir/logs/start.log" >&2
        return 1
    fi
    wait_for_url "http://127.0.0.1:$port/healthz" >/dev/null
    echo "$port"
}

# Stops what start_toursd and start_nginx started in $1 and removes $1 (an EXIT trap).
stop_servers() {
    stop_nginx "$1"
    [ -n "${TOURSD_PID:-}" ] && kill "$TOURSD_PID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$1"
}

# jpeg_like COUNT FILE: COUNT random bytes behind a JPEG's signature and frame header of
# 4096×2048 (toursd refuses panoramas whose bytes are not of their declared type, the client
# library images without dimensions; random bytes are what measures a transfer).
jpeg_like() {
    { printf '\377\330\377\300\000\021\010\010\000\020\000\003\001\042\000\002\021\001\003\021\001'; head -c "$(($1 - 21))" /dev/urandom; } > "$2"
}

# A bench with a PostgreSQL cluster of its own: sets $work (a scratch folder outside the work
# tree), $pids (processes to end; append each daemon started), $server (the cluster's URL, no
# database), and on exit ends the processes, nginx if one was started in $work, the cluster,
# and removes $work.
with_postgres() {
    work=$(mktemp -d -p "${BENCH_DIR:-/var/tmp}" bench.XXXXXX)
    chmod 755 "$work"
    pids=()
    trap postgres_bench_cleanup EXIT
    server=$(bash Tests/postgres/cluster.sh start "$work/pg")
}

postgres_bench_cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    stop_nginx "$work"
    bash Tests/postgres/cluster.sh stop "$work/pg"
    rm -rf "$work"
}

# bench_floor BASE TOKEN: a new property with one floor on the toursd at BASE; prints the floor's id.
bench_floor() {
    local property floor
    property=$(cat /proc/sys/kernel/random/uuid) floor=$(cat /proc/sys/kernel/random/uuid)
    curl -fs -o /dev/null -X PUT -H "Authorization: Bearer $2" -d '{"name":"Bench","floorCount":1}' "$1/v1/properties/$property"
    curl -fs -o /dev/null -X PUT -H "Authorization: Bearer $2" -d '{"number":0}' "$1/v1/properties/$property/floors/$floor"
    echo "$floor"
}
