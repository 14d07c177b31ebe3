#!/usr/bin/env bash
# make test, right after make build: the README's first commands, as a new user runs them.
# `make run` itself (its recipe, its config file config/toursd.json) on a port the OS picks and
# a data folder of its own, until it says `listening on` and /healthz answers; then the README's
# `tours` commands with the release `tours` that make run built, ending with a synced property;
# then Ctrl-C (SIGINT to make run's process group), which toursd must end with its graceful stop.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
make_pid=""
cleanup() {
    [ -z "$make_pid" ] || kill -KILL -- "-$make_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    sed 's/^/  make run: /' "$work/run.log" >&2
    exit 1
}

# make run in a process group of its own, as in a terminal of its own; its output through a
# pipe, read line by line until it listens (a make run that must build first fails here).
mkfifo "$work/output"
TOURSD_port=0 TOURSD_dataDir="$work/data" setsid make --no-print-directory run > "$work/output" 2>&1 < /dev/null &
make_pid=$!
exec 3< "$work/output"
port=""
while IFS= read -r -t 120 line <&3; do
    echo "$line" >> "$work/run.log"
    if [[ $line =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+)$ ]]; then
        port=${BASH_REMATCH[1]}
        break
    fi
done
[ -n "$port" ] || fail "make run did not say 'listening on' within 120 s"
# The rest of its output is kept for a failure's report; the pipe never fills.
cat <&3 >> "$work/run.log" &
exec 3<&-

health=$(curl -fsS --max-time 10 "http://127.0.0.1:$port/healthz") || fail "/healthz did not answer"
[[ $health == *'"status":"ok"'* ]] || fail "/healthz answered $health"
[ "$(stat -c %a "$work/data/admin.token")" = 600 ] || fail "data/admin.token is not mode 0600"

# The README's commands, with its PATH, in a home of their own.
export PATH=$PWD/.build/release:$PATH HOME=$work/home
unset XDG_CONFIG_HOME XDG_DATA_HOME TOURS_CONFIG
server=http://127.0.0.1:$port
step() { "$@" > "$work/step.out" 2>&1 || { cat "$work/step.out" >&2; fail "\`$*\` exited $?"; }; }
step tours init --server "$server" --token-file "$work/data/admin.token"
property=$(tours property create "Villa" --floors 2) || fail "tours property create exited $?"
step tours plan "$property" examples/plan.json
step tours panorama add "$property" examples/pano.jpg --room Kitchen
step tours sync
step tours status "$property" --json
grep -q '"sync":"synced"' "$work/step.out" || { cat "$work/step.out" >&2; fail "the property is not synced"; }
token=$(cat "$work/data/admin.token")
curl -fsS --max-time 10 -H "Authorization: Bearer $token" "$server/v1/properties/$property" > "$work/property.json" \
    || fail "the server does not have the property"
grep -q '"tourId"' "$work/property.json" || fail "the server's property has no tourId"

# Ctrl-C: the whole group, make and toursd, as a terminal sends it.
kill -INT -- "-$make_pid"
timeout 30 tail --pid="$make_pid" -f /dev/null || fail "make run did not end within 30 s of Ctrl-C"
make_pid=""
wait
grep -q 'msg=stopped' "$work/run.log" || fail "toursd did not stop gracefully"
echo "make run: listened on a free port, served the README's tours commands, stopped on Ctrl-C"
