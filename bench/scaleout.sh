#!/usr/bin/env bash
# Scale-out (issue 16): an authenticated GET and one-shot uploads against 1 toursd on SQLite,
# 1 toursd on PostgreSQL, and 3 toursd on that PostgreSQL behind nginx (round robin, a shared
# blob folder), same run. Everything (PostgreSQL, nginx, the daemons, wrk, curl) shares this
# machine's cores, so "3 daemons" measures the cost of the balancer and the shared database,
# not added capacity.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release toursd
toursd=.build/release/toursd
with_postgres
psql "$server/postgres" -qc "CREATE DATABASE tours"

start() { # name, then environment assignments; prints the port
    local name=$1
    shift
    mkdir -p "$work/$name"
    env "$@" TOURSD_maxConnectionsPerAddress=0 "$toursd" serve --port 0 --data-dir "$work/$name" 2> "$work/$name.log" &
    pids+=($!)
}
start sqlite
pid_sqlite=${pids[-1]}
start pg1 TOURSD_databaseUrl="$server/tours" TOURSD_blobDir="$work/blobs"
pid_pg1=${pids[-1]}
port_sqlite=$(toursd_port "$work/sqlite.log") port_pg1=$(toursd_port "$work/pg1.log")
wait_for_url "http://127.0.0.1:$port_pg1/healthz" >/dev/null
start pg2 TOURSD_databaseUrl="$server/tours" TOURSD_blobDir="$work/blobs"
pid_pg2=${pids[-1]}
start pg3 TOURSD_databaseUrl="$server/tours" TOURSD_blobDir="$work/blobs"
pid_pg3=${pids[-1]}
# The same database through its Unix socket, as a daemon on the database's machine would reach it.
start pgsocket TOURSD_databaseUrl="postgresql://postgres@/tours?host=$work/pg&port=$(cat "$work/pg/port")" TOURSD_blobDir="$work/blobs"
pid_socket=${pids[-1]}
port_pg2=$(toursd_port "$work/pg2.log") port_pg3=$(toursd_port "$work/pg3.log") port_socket=$(toursd_port "$work/pgsocket.log")
lb=$(start_balancer "$work" "$port_pg1" "$port_pg2" "$port_pg3")
for port in "$port_sqlite" "$port_pg1" "$port_pg2" "$port_pg3" "$port_socket" "$lb"; do wait_for_url "http://127.0.0.1:$port/healthz" >/dev/null; done

token_sqlite=$(cat "$work/sqlite/admin.token") token_pg=$(cat "$work"/pg1/admin.token)
property=$(cat /proc/sys/kernel/random/uuid)
for target in "$port_sqlite $token_sqlite" "$lb $token_pg"; do
    set -- $target
    curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $2" -H "Content-Type: application/json" \
        -d '{"name":"Bench","floorCount":1}' "http://127.0.0.1:$1/v1/properties/$property"
done

# CPU time (user and system, in clock ticks) of these processes and of every PostgreSQL process.
cpu_ticks() {
    local total=0 pid stat fields
    for pid in "$@" $(pgrep -x postgres); do
        stat=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) || continue
        read -r -a fields <<< "$stat" # from the state on: utime and stime are the 12th and 13th
        total=$((total + fields[11] + fields[12]))
    done
    echo "$total"
}
get() { # port token daemon-pids...: "RPS P99 CPU", CPU the microseconds per GET of the daemons and PostgreSQL together
    local port=$1 token=$2 before after figures requests
    shift 2
    before=$(cpu_ticks "$@")
    figures=$(WRK_CONNECTIONS=32 BENCH_SECONDS=${BENCH_SECONDS:-6} wrk_figures "http://127.0.0.1:$port/v1/properties/$property" "$work/wrk.txt" \
        -H "Authorization: Bearer $token")
    after=$(cpu_ticks "$@")
    requests=$(grep -oE '[0-9]+ requests in' "$work/wrk.txt" | cut -d' ' -f1)
    echo "$figures $(( (after - before) * 1000000 / $(getconf CLK_TCK) / requests ))"
}
uploads() { # port token: aggregate MB/s of 32 one-shot 4 MB panoramas, 8 at a time
    local floor
    floor=$(cat /proc/sys/kernel/random/uuid)
    curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $2" -H "Content-Type: application/json" -d '{"number":0}' \
        "http://127.0.0.1:$1/v1/properties/$property/floors/$floor"
    jpeg_like 4194304 "$work/pano.bin"
    : > "$work/curl.cfg"
    for _ in $(seq 1 32); do
        printf 'url = "http://127.0.0.1:%s/v1/panoramas/%s?floorId=%s"\nupload-file = "%s"\n-o /dev/null\n' \
            "$1" "$(cat /proc/sys/kernel/random/uuid)" "$floor" "$work/pano.bin" >> "$work/curl.cfg"
    done
    local start end
    start=$(date +%s.%N)
    curl -fsS --no-progress-meter --parallel --parallel-max 8 -H "Authorization: Bearer $2" -H "Content-Type: image/jpeg" -K "$work/curl.cfg"
    end=$(date +%s.%N)
    python3 -c "print(f'{32 * 4 / ($end - $start):.0f}')"
}

# The CPU time the host took from this machine (steal, /proc/stat), in clock ticks of all cores.
steal_ticks() { awk '/^cpu / { print $9 }' /proc/stat; }
# Alternating rounds, the median of each: this machine's run-to-run noise is larger than
# the differences measured. The ratios are the median of each round's (its GETs run back to
# back, under the same load from outside), and the host's steal is printed beside them.
rounds=${BENCH_ROUNDS:-5}
: > "$work/gets.txt"
steal_before=$(steal_ticks) rounds_started=$(date +%s.%N)
for _ in $(seq 1 "$rounds"); do
    echo "sqlite $(get "$port_sqlite" "$token_sqlite" "$pid_sqlite")" >> "$work/gets.txt"
    echo "pg1 $(get "$port_pg1" "$token_pg" "$pid_pg1")" >> "$work/gets.txt"
    echo "socket $(get "$port_socket" "$token_pg" "$pid_socket")" >> "$work/gets.txt"
    echo "pg3 $(get "$lb" "$token_pg" "$pid_pg1" "$pid_pg2" "$pid_pg3")" >> "$work/gets.txt"
done
steal=$(python3 -c "print(f'{100 * ($(steal_ticks) - $steal_before) / $(getconf CLK_TCK) / $(nproc) / ($(date +%s.%N) - $rounds_started):.0f}')")
ratio() { # numerator denominator: the median of their rounds' ratios
    python3 - "$1" "$2" "$work/gets.txt" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[3])]
top = [float(r[1]) for r in rows if r[0] == sys.argv[1]]
bottom = [float(r[1]) for r in rows if r[0] == sys.argv[2]]
print(f"{statistics.median(t / b for t, b in zip(top, bottom)):.2f}")
PY
}
ratio_pg1=$(ratio pg1 sqlite) ratio_socket=$(ratio socket sqlite) ratio_pg3=$(ratio pg3 pg1)
median() { # name: "RPS P99 CPU", each the median of its rounds
    python3 - "$1" "$work/gets.txt" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[2]) if line.split()[0] == sys.argv[1]]
print(f"{statistics.median(float(r[1]) for r in rows):.0f} {statistics.median(float(r[2]) for r in rows):.3f} {statistics.median(float(r[3]) for r in rows):.0f}")
PY
}
read -r get_sqlite p99_sqlite cpu_sqlite <<< "$(median sqlite)"
read -r get_pg1 p99_pg1 cpu_pg1 <<< "$(median pg1)"
read -r get_socket p99_socket cpu_socket <<< "$(median socket)"
read -r get_pg3 p99_pg3 cpu_pg3 <<< "$(median pg3)"
up_sqlite=$(uploads "$port_sqlite" "$token_sqlite")
up_pg1=$(uploads "$port_pg1" "$token_pg")
up_pg3=$(uploads "$lb" "$token_pg")
python3 - "$get_sqlite" "$p99_sqlite" "$get_pg1" "$p99_pg1" "$get_pg3" "$p99_pg3" "$up_sqlite" "$up_pg1" "$up_pg3" \
    "$get_socket" "$p99_socket" "$cpu_sqlite" "$cpu_pg1" "$cpu_socket" "$cpu_pg3" "$ratio_pg1" "$ratio_socket" "$ratio_pg3" "$steal" "$rounds" <<'PY'
import sys
gs, ps, g1, p1, g3, p3, us, u1, u3, gu, pu, cs, c1, cu, c3, r1, ru, r3, steal, rounds = map(float, sys.argv[1:])
print(f"Scale-out, same run, one machine (2 cores shared by PostgreSQL, nginx, the daemons and the load); GETs: wrk -c32, median of {rounds:.0f} alternating rounds")
print("                                   GET /v1/properties/{id}, token        uploads (32 x 4 MB, 8 at a time)")
print(f"  1 toursd on SQLite               {gs:8.0f} req/s  p99 {ps:6.2f} ms          {us:5.0f} MB/s")
print(f"  1 toursd on PostgreSQL           {g1:8.0f} req/s  p99 {p1:6.2f} ms          {u1:5.0f} MB/s")
print(f"  3 toursd on PostgreSQL, nginx    {g3:8.0f} req/s  p99 {p3:6.2f} ms          {u3:5.0f} MB/s")
print(f"  1 toursd, PostgreSQL's socket    {gu:8.0f} req/s  p99 {pu:6.2f} ms")
print(f"  authenticated GET on PostgreSQL / SQLite (median of the rounds' ratios): {r1:.2f}x over TCP, {ru:.2f}x over the Unix socket (target >= 0.85x); 3 daemons / 1: {r3:.2f}x")
print(f"  CPU per GET, the daemons and PostgreSQL (not wrk, not nginx): SQLite {cs:.0f} us, PostgreSQL {c1:.0f} us ({c1 / cs:.2f}x, target <= 1.2x), its socket {cu:.0f} us, 3 daemons {c3:.0f} us")
print(f"  the host took {steal:.0f} % of the cores meanwhile (steal time, /proc/stat): above a few percent, the figures above are the host's as much as ours")
PY
