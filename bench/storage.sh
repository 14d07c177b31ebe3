#!/usr/bin/env bash
# The storage seam (issue 29), same run:
# - data scale: a property's status, floor and tour document (50 panoramas, 5 rooms) while its
#   tenant holds 2,000 panoramas and while it holds 1,000,000 (the rest filled directly into
#   the database by bench/large_tenant.sql), on SQLite and on PostgreSQL; alternating rounds.
# - the tour document of a property of 10 floors on PostgreSQL: the round trips it takes
#   (toursd's own counter, /metrics) and its latency beside SQLite's.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release toursd
toursd=.build/release/toursd
with_postgres
for db in small large tenfloors; do psql "$server/postgres" -qc "CREATE DATABASE $db"; done

start() { # name, then environment assignments; prints nothing (the port is in its log)
    local name=$1
    shift
    mkdir -p "$work/$name"
    env "$@" TOURSD_maxConnectionsPerAddress=0 "$toursd" serve --port 0 --data-dir "$work/$name" 2> "$work/$name.log" &
    pids+=($!)
}
declare -A port token
for name in sqlite_small sqlite_large sqlite_tenfloors; do start "$name"; done
# Each on a database of its own, so each its own key (a shared deployment names the one its
# daemons read: webhookKeyFile).
for name in small large tenfloors; do start "pg_$name" TOURSD_databaseUrl="$server/$name" TOURSD_webhookKeyFile="$work/pg_$name.key"; done
for name in sqlite_small sqlite_large sqlite_tenfloors pg_small pg_large pg_tenfloors; do
    port[$name]=$(toursd_port "$work/$name.log")
    wait_for_url "http://127.0.0.1:${port[$name]}/healthz" >/dev/null
    token[$name]=$(cat "$work/$name/admin.token")
done

api() { # daemon method path [curl arguments...]
    local name=$1 method=$2 path=$3
    shift 3
    curl -fsS -o /dev/null -X "$method" -H "Authorization: Bearer ${token[$name]}" "$@" "http://127.0.0.1:${port[$name]}$path"
}
uuid() { cat /proc/sys/kernel/random/uuid; }
jpeg_like 2048 "$work/pano.bin"

# The measured property: FLOORS floors of five rooms each, 50 panoramas over the first floor's
# rooms. Prints "PROPERTY FLOOR TOUR".
property() { # daemon floors
    local name=$1 floors=$2 property floor first tour rooms room
    property=$(uuid)
    api "$name" PUT "/v1/properties/$property" -H "Content-Type: application/json" -d "{\"name\":\"Measured\",\"floorCount\":$floors}"
    for number in $(seq 1 "$floors"); do
        floor=$(uuid)
        [ "$number" = 1 ] && first=$floor
        api "$name" PUT "/v1/properties/$property/floors/$floor" -H "Content-Type: application/json" -d "{\"number\":$number}"
        rooms=""
        for _ in 1 2 3 4 5; do
            room=$(uuid)
            rooms+="${rooms:+,}{\"id\":\"$room\",\"name\":\"Room\",\"outline\":[[0,0],[4,0],[4,3],[0,3]]}"
            [ "$number" = 1 ] && echo "$room" >> "$work/$name.rooms"
        done
        api "$name" PUT "/v1/floors/$floor/plan" -H "Content-Type: application/json" \
            -d "{\"planId\":\"$(uuid)\",\"mode\":\"newScan\",\"rooms\":[$rooms],\"structure\":{}}"
    done
    : > "$work/curl.cfg"
    mapfile -t rooms < "$work/$name.rooms"
    for index in $(seq 0 49); do
        printf 'url = "http://127.0.0.1:%s/v1/panoramas/%s?floorId=%s&roomId=%s"\nupload-file = "%s"\n-o /dev/null\n' \
            "${port[$name]}" "$(uuid)" "$first" "${rooms[$((index % 5))]}" "$work/pano.bin" >> "$work/curl.cfg"
    done
    curl -fsS --no-progress-meter --parallel --parallel-max 8 -H "Authorization: Bearer ${token[$name]}" -H "Content-Type: image/jpeg" -K "$work/curl.cfg"
    tour=$(curl -fsS -H "Authorization: Bearer ${token[$name]}" "http://127.0.0.1:${port[$name]}/v1/properties/$property" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["tourId"])')
    echo "$property $first $tour"
}

fill() { # daemon properties: that many more properties of 50 panoramas in the daemon's tenant
    local name=$1 sql
    sql=$(sed -e "s/{tenant}/default/g" -e "s/{properties}/$2/g" -e "s/{panoramas}/50/g" bench/large_tenant.sql)
    if [[ $name == sqlite_* ]]; then
        sqlite3 "$work/$name/toursd.sqlite" <<< "PRAGMA busy_timeout = 10000; ${sql//\{blob\}/BLOB}" > /dev/null
    else
        psql -q "$server/${name#pg_}" <<< "${sql//\{blob\}/bytea}"
        psql -q "$server/${name#pg_}" -c "ANALYZE" # as autovacuum would, after a million rows
    fi
}

declare -A measured
for name in sqlite_small sqlite_large pg_small pg_large sqlite_tenfloors pg_tenfloors; do
    floors=1
    [[ $name == *tenfloors ]] && floors=10
    made=$(property "$name" "$floors")
    measured[$name]=$made
done
# 2,000 and 1,000,000 panoramas in the tenant: the measured property's 50 and the rest.
fill sqlite_small 39
fill pg_small 39
fill sqlite_large 19999
fill pg_large 19999

mean_ms() { # daemon path: the mean latency of GET path, one connection (ms)
    local name=$1 out="$work/wrk.txt"
    wrk -t1 -c1 -d"${BENCH_SECONDS:-3}"s -H "Authorization: Bearer ${token[$name]}" "http://127.0.0.1:${port[$name]}$2" > "$out" 2>&1
    python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
if "Non-2xx" in text:
    sys.exit("error answers: " + text)
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
print(f"{1000 / rate:.3f}")
PY
}
record() { # label daemon path: "label mean" into scale.txt (a failure stops the bench)
    local figure
    figure=$(mean_ms "$2" "$3")
    echo "$1 $figure" >> "$work/scale.txt"
}
: > "$work/scale.txt"
for _ in $(seq 1 "${BENCH_ROUNDS:-3}"); do
    for backend in sqlite pg; do
        for size in small large; do
            read -r property floor tour <<< "${measured[${backend}_$size]}"
            record "$backend $size status" "${backend}_$size" "/v1/properties/$property/status"
            record "$backend $size floor" "${backend}_$size" "/v1/floors/$floor"
            record "$backend $size tour" "${backend}_$size" "/v1/tours/$tour"
        done
    done
    for backend in sqlite pg; do
        read -r property floor tour <<< "${measured[${backend}_tenfloors]}"
        record "$backend ten tour" "${backend}_tenfloors" "/v1/tours/$tour"
    done
done

# The round trips of one tour document of 10 floors, from toursd's own counter.
trips() { curl -fsS "http://127.0.0.1:${port[pg_tenfloors]}/metrics" | awk '/^toursd_database_round_trips_total/ { print $2 }'; }
read -r property floor tour <<< "${measured[pg_tenfloors]}"
before=$(trips)
for _ in $(seq 1 100); do api pg_tenfloors GET "/v1/tours/$tour"; done
after=$(trips)

python3 - "$work/scale.txt" "$before" "$after" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def mean(backend, size, what):
    return statistics.median(float(r[3]) for r in rows if r[:3] == [backend, size, what])
print("The storage seam, same run: a property of 50 panoramas and 5 rooms, its tenant holding 2,000 or 1,000,000 panoramas")
print("(filled directly into the database), mean latency of one connection's GETs, median of the alternating rounds")
for backend, label in (("sqlite", "SQLite"), ("pg", "PostgreSQL")):
    for what, path in (("status", "GET /v1/properties/{id}/status"), ("floor", "GET /v1/floors/{id}"), ("tour", "GET /v1/tours/{id}")):
        small, large = mean(backend, "small", what), mean(backend, "large", what)
        print(f"  {label:10} {path:32} 2,000: {small:6.3f} ms   1,000,000: {large:6.3f} ms   ({large / small:.2f}x, target <= 1.5x)")
sqlite, pg = mean("sqlite", "ten", "tour"), mean("pg", "ten", "tour")
trips = (float(sys.argv[3]) - float(sys.argv[2])) / 100
print(f"  the tour document of 10 floors: SQLite {sqlite:.3f} ms, PostgreSQL {pg:.3f} ms ({pg / sqlite:.2f}x, target <= 2x);"
      f" {trips:.1f} round trips to PostgreSQL per document, the token check's included (target <= 3)")
PY
