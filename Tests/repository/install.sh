#!/usr/bin/env bash
# make test: `make install` staged in a folder (DESTDIR) as the README says to run it, then
# what it made checked: the service user (a system account, no shell), the folders' and
# files' owners and modes, the unit as systemd-analyze reads it (nothing to say), and the
# installed daemon started as the unit starts it (as that user, on the installed settings),
# its /metrics asking for the installed token.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
stage=$(mktemp -d /tmp/toursd-install.XXXXXX)
chmod 755 "$stage" # the service user goes through it, as through /
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    rm -rf "$stage"
}
trap cleanup EXIT
fail() { echo "FAIL: install: $*" >&2; exit 1; }
# The accounts' files as this machine has them: the user is added to the staged copies.
mkdir -p "$stage/etc"
for file in passwd group shadow gshadow login.defs; do [ -e "/etc/$file" ] && cp -p "/etc/$file" "$stage/etc/"; done
make --no-print-directory install DESTDIR="$stage" >/dev/null

entry=$(grep '^toursd:' "$stage/etc/passwd") || fail "no toursd user"
IFS=: read -r _ _ uid gid _ home shell <<< "$entry"
[ "$home" = /var/lib/toursd ] && [ "$shell" = /usr/sbin/nologin ] && [ "$uid" -lt 1000 ] || fail "the user is not a system account without a shell: $entry"
grep -q "^toursd:x:$gid:" "$stage/etc/group" || fail "no toursd group"
owned() { # PATH MODE UID GID
    [ "$(stat -c '%a %u %g' "$stage$1")" = "$2 $3 $4" ] || fail "$1 is $(stat -c '%a %u %g' "$stage$1"), not $2 $3 $4"
}
owned /var/lib/toursd 700 "$uid" "$gid"
owned /etc/toursd 750 0 "$gid"
for file in toursd.json environment metrics.token; do owned "/etc/toursd/$file" 640 0 "$gid"; done
owned /etc/systemd/system/toursd.service 644 0 0
owned /usr/local/bin/toursd 755 0 0
[ "$(wc -c < "$stage/etc/toursd/metrics.token")" -ge 32 ] || fail "the metrics token is short"
cmp -s config/toursd.service "$stage/etc/systemd/system/toursd.service" || fail "the unit installed is not config/toursd.service"

# A second install keeps what the operator wrote.
echo "TOURSD_logLevel=warn" >> "$stage/etc/toursd/environment"
token=$(cat "$stage/etc/toursd/metrics.token")
DESTDIR="$stage" bash config/install.sh >/dev/null
grep -q "TOURSD_logLevel=warn" "$stage/etc/toursd/environment" && [ "$(cat "$stage/etc/toursd/metrics.token")" = "$token" ] \
    || fail "a second install replaced the settings"

# The unit as systemd reads it, with systemd's own units and the commands it names beside it.
mkdir -p "$stage/usr/lib/systemd" "$stage/bin"
cp -a /usr/lib/systemd/system "$stage/usr/lib/systemd/"
cp /bin/kill "$stage/bin/"
said=$(systemd-analyze verify --root="$stage" toursd.service 2>&1) || fail "systemd-analyze: $said"
[ -z "$said" ] || fail "systemd-analyze has something to say: $said"

# Started as the unit starts it: its user, its Environment= lines (their paths staged), the
# environment file, no other environment.
unit_environment=$(sed -n 's/^Environment=//p' config/toursd.service | sed "s|=/|=$stage/|")
file_environment=$(grep -v '^#' "$stage/etc/toursd/environment" | grep . || true)
log=$stage/toursd.log
# shellcheck disable=SC2086
setpriv --reuid "$uid" --regid "$gid" --clear-groups env -i PATH=/usr/bin:/bin $unit_environment $file_environment \
    TOURSD_host=127.0.0.1 TOURSD_port=0 "$stage/usr/local/bin/toursd" serve 2> "$log" &
pid=$!
port=$(toursd_port "$log")
wait_for_url "http://127.0.0.1:$port/readyz" >/dev/null
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 401 ] || fail "/metrics answered without its token"
curl -fs -H "Authorization: Bearer $token" "http://127.0.0.1:$port/metrics" | grep -q '^toursd_threads' || fail "/metrics refused its token"
[ "$(stat -c '%u %a' "$stage/var/lib/toursd/admin.token")" = "$uid 600" ] || fail "the first token is not the user's alone"
kill -TERM "$pid"
wait "$pid" || fail "toursd did not stop cleanly on SIGTERM: $(tail -n 5 "$log")"
pid=""
echo "install: the user, folders, settings and unit as the docs say; the daemon starts as the unit starts it"
