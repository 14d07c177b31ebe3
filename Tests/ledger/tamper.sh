#!/usr/bin/env bash
# A test of the soak's test: one panorama the library acknowledged is deleted from the server
# by hand before the comparison (Soak --tamper); the ledger check must then fail, naming it.
set -uo pipefail
cd "$(dirname "$0")/../.."
output=$(.build/debug/Soak --seconds 6 --clients 1 --tamper 2>&1)
status=$?
if [ "$status" -eq 1 ] && grep -q "^soak: FAIL" <<<"$output" && grep -q "from the server: 1$" <<<"$output" \
        && grep -q "^  server: panorama .*found nothing" <<<"$output"; then
    echo "soak ledger: a panorama deleted from the server by hand is caught (PASS)"
    exit 0
fi
echo "$output"
echo "soak ledger: the deleted panorama went unnoticed (exit $status) (FAIL)"
exit 1
