#!/bin/sh
# make bench: rotating BENCH_ROTATE_CREDS credentials (default 100) against
# serve-api over loopback, rate limit off; the server's request log counts. Every
# credential is rotated with no grace period (`creds rotate --older-than 0s
# --grace 0s`), then one `sync --push-only` creates each successor and retires
# each old one (this cache never handed their tokens out). The minimum per
# rotation is 5: the successor's POST, the look and PATCH that take its creation
# marker away, the retirement's look and DELETE. A second push must send nothing.
# usage: tests/bench/rotate.sh BUILD_DIR   (rampart inside)
set -eu
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
n=${BENCH_ROTATE_CREDS:-100}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-rotate.XXXXXX")
server_pid=""
stop_server() {
    [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || :; }
    server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT INT TERM
key=bench_key_$$
export RAMPART_SERVE_API_KEY=$key RAMPART_API_KEY=$key RAMPART_RATE=0 \
    RAMPART_DB="$work/cache.db" RAMPART_ROTATE_QUIET=1s
log="$work/server.log"
rm -f "$work/ready"
"$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$work/server.db" \
    --ready-file "$work/ready" 2>>"$log" &
server_pid=$!
while [ ! -s "$work/ready" ]; do sleep 0.02; done # poll for the ready file
export RAMPART_API_URL="http://$(cat "$work/ready")"
lines() { wc -l <"$log"; }
# requests_since MARK WANT: the server's lines after MARK, once WANT have landed
# (polled: the server logs after replying) or a second passed.
requests_since() {
    tries=0
    while [ "$(($(lines) - $1))" -lt "$2" ] && [ $tries -lt 100 ]; do
        tries=$((tries + 1))
        sleep 0.01
    done
    echo $(($(lines) - $1))
}

i=0
while [ $i -lt "$n" ]; do
    "$RAMPART" creds create --description "agent-$i" --acl bind:a.example.com >/dev/null
    i=$((i + 1))
done
"$RAMPART" sync >/dev/null 2>&1
"$RAMPART" creds rotate --older-than 0s --grace 0s >/dev/null
mark=$(lines)
t0=$(date +%s.%N)
"$RAMPART" sync --push-only >/dev/null 2>&1
t1=$(date +%s.%N)
minimum=$((5 * n))
sent=$(requests_since "$mark" "$minimum")
mark=$(lines)
"$RAMPART" sync --push-only >/dev/null 2>&1
again=$(requests_since "$mark" 0)
left=$("$RAMPART" creds list -o name | wc -l)
pace=$(awk -v r="$sent" 'BEGIN { printf "%.1f", r / (120 * 0.8) }')

bench_row "rotate $n credentials: requests sent" "$sent" "$minimum" \
    "$(bench_ratio "$sent" "$minimum")" \
    "= 5 per rotation (POST, marker look+PATCH, retirement look+DELETE)"
bench_row "... a second push: requests" "$again" "0" "" "0 (nothing left to send)"
bench_row "... credentials left (one per name)" "$left" "$n" "$(bench_ratio "$left" "$n")" \
    "1.00"
bench_row "... push time unpaced, s" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
    "" "" "at the budget's pace (96/min): $pace min"
bench_done
