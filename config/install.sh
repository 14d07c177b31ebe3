#!/usr/bin/env bash
# make install: toursd as a systemd service (config/toursd.service), from the release build.
# Makes the service user toursd (a system account, no shell), /var/lib/toursd (0700, the
# user's), /etc/toursd (0750 root:toursd) with toursd.json, environment (config/
# toursd.environment) and metrics.token (0640 root:toursd; kept when there), the binaries in
# $PREFIX/bin and the unit. DESTDIR stages it all under a folder (the user then in that
# folder's etc/passwd, which must be there): Tests/repository/install.sh installs so.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${DESTDIR:-} prefix=${PREFIX:-/usr/local}
[ -x .build/release/toursd ] && [ -x .build/release/tours ] || { echo "install: build first (make build)" >&2; exit 1; }

install -d -m 755 "$root$prefix/bin" "$root/etc/systemd/system"
install -m 755 .build/release/toursd .build/release/tours "$root$prefix/bin/"

if ! grep -q '^toursd:' "$root/etc/passwd"; then
    useradd ${root:+--prefix "$root"} --system --user-group --home-dir /var/lib/toursd --no-create-home \
        --shell /usr/sbin/nologin --comment "NoughtyTours sync backend" toursd
fi
# By number: a staged user is not this machine's.
uid=$(awk -F: '$1 == "toursd" { print $3 }' "$root/etc/passwd")
gid=$(awk -F: '$1 == "toursd" { print $4 }' "$root/etc/passwd")

install -d -m 700 -o "$uid" -g "$gid" "$root/var/lib/toursd"
install -d -m 750 -o 0 -g "$gid" "$root/etc/toursd"
settings=$root/etc/toursd
[ -e "$settings/toursd.json" ] || install -m 640 -o 0 -g "$gid" config/toursd.json "$settings/toursd.json"
[ -e "$settings/environment" ] || install -m 640 -o 0 -g "$gid" config/toursd.environment "$settings/environment"
if [ ! -e "$settings/metrics.token" ]; then
    (umask 077; head -c 32 /dev/urandom | base64 | tr -d '=+/\n' > "$settings/metrics.token")
    chown "0:$gid" "$settings/metrics.token"
    chmod 640 "$settings/metrics.token"
fi
sed "s|/usr/local/bin/|$prefix/bin/|g" config/toursd.service > "$root/etc/systemd/system/toursd.service"
chmod 644 "$root/etc/systemd/system/toursd.service"
echo "installed toursd in ${root:-/}: systemctl daemon-reload && systemctl enable --now toursd"
