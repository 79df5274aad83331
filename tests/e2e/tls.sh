#!/bin/sh
# The remote client verifies TLS certificates by default: a sync to an https server
# with a self-signed certificate fails before anything is sent, says why, and
# leaves the queued rows as they were.
. "$(dirname "$0")/lib.sh"

if ! command -v openssl >/dev/null 2>&1; then
    skip_all "tls: no openssl command"
fi
tls_pid=""
trap '[ -n "$tls_pid" ] && kill "$tls_pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj /CN=127.0.0.1 -days 1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
# A free port: try a few, polling each for a TLS answer (curl -k: no verification).
port=""
for try in 1 2 3 4 5; do
    p=$((20000 + ($$ * 7 + try * 997) % 40000))
    openssl s_server -quiet -accept "127.0.0.1:$p" -cert "$tmp/cert.pem" -key "$tmp/key.pem" \
        -www >/dev/null 2>&1 &
    tls_pid=$!
    i=0
    while [ $i -lt 100 ] && kill -0 "$tls_pid" 2>/dev/null; do
        if curl -sk -o /dev/null "https://127.0.0.1:$p/"; then
            port=$p
            break 2
        fi
        sleep 0.05
        i=$((i + 1))
    done
    kill "$tls_pid" 2>/dev/null
    tls_pid=""
done
check "a self-signed https server answers (curl -k)" [ -n "$port" ]

export RAMPART_API_URL="https://127.0.0.1:$port" RAMPART_API_KEY=tls_test_key_0123456789
run rules create --cidr 10.9.0.0/16 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a --action allow
run sync
check "sync to a self-signed certificate: not converged (exit 4)" status_is 4
check "  the reason names the certificate" err_has "SSL certificate problem"
check "  the key is not in the message" err_lacks tls_test_key_0123456789
run plan
check "  the rule is still queued to create" out_has "Plan: 1 to create"
checks_done
