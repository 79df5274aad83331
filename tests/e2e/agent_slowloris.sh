#!/bin/sh
# `rampart agent` under slow-header clients (issue 14, finding 1): another process
# holds hundreds of TCP connections that send their request head a byte at a time
# and never finish it. Connections that have shown no key are cut at the head
# deadline (from accept, not an idle timer) and make room for newer ones, so keyed
# lookups over TCP, each on a new connection, keep getting their token; the unix
# socket is a listener of its own and never notices. Figures (p99 with and
# without the load) are in tests/bench/agent.sh, not asserted here.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
load=""
stop_load() {
    [ -n "$load" ] && kill -TERM "$load" 2>/dev/null && wait "$load" 2>/dev/null
    load=""
}
trap 'stop_load; stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM

# The load comes from tests/tools/slowload.c, built next to rampart by make test;
# compiled here when that build is not around.
SLOWLOAD="$(dirname "$RAMPART")/tools/slowload"
if [ ! -x "$SLOWLOAD" ]; then
    SLOWLOAD="$tmp/slowload"
    ${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -o "$SLOWLOAD" "$here/../tools/slowload.c" \
        2>"$tmp/cc.err" || SLOWLOAD=""
fi
if [ -z "$SLOWLOAD" ]; then
    skip_all "slow-header clients: tests/tools/slowload.c not built and no C compiler"
fi

# ---- a cache holding one credential with its token, made by a real sync ----
DB="$tmp/cache.db"
export RAMPART_DB="$DB"
start_server agent || exit 1
run creds create --description web --sync
T_WEB=$(sed -n 's/^token: //p' "$tmp/out")
stop_server
check "setup: a credential synced with its token" [ -n "$T_WEB" ]

# --idle-timeout 1: the head deadline (5 s unless the idle timeout is shorter)
# is 1 s, so the test runs in seconds.
mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
KEY="$tmp/keys/agent.key"
start_listening_agent a --listen "unix:$tmp/run/a.sock" --listen tcp:127.0.0.1:0 \
    --key-file "$KEY" --idle-timeout 1 --rate 0
key_config "$KEY"

# hold N: slowload against the TCP listener in the background, its figures in
# $tmp/load.out (the last line is the latest).
hold() {
    "$SLOWLOAD" hold "$T" "$1" 100 >"$tmp/load.out" 2>"$tmp/load.err" &
    load=$!
}
# figure NAME: the latest value of NAME= from the load's output (0 before any).
figure() {
    v=$(tail -n 1 "$tmp/load.out" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p")
    echo "${v:-0}"
}
# until_figure NAME MIN: poll (10 s at most) until the load reports NAME >= MIN.
until_figure() {
    i=0
    while [ "$(figure "$1")" -lt "$2" ] && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    [ "$(figure "$1")" -ge "$2" ]
}

# ---- the deadline: a few slow clients, far below any cap, are cut all the same ----
hold 8
until_figure opened 8
check "8 slow-header connections opened" [ "$(figure opened)" -ge 8 ]
until_figure cut 8
check "  each is cut at the head deadline though it never idles" [ "$(figure cut)" -ge 8 ]
stop_load
echo "# slow clients alone: $(tail -n 1 "$tmp/load.out")"

# ---- 500 of them from another process: keyed lookups still get through ----
hold 500
until_figure opened 500
check "500 slow-header connections opened" [ "$(figure opened)" -ge 500 ]
"$SLOWLOAD" probe "$T" /v1/tokens/web "$KEY" 100 >"$tmp/probe.out" 2>&1
check "100 keyed lookups over TCP, each a new connection: all 200" \
    grep -q '^ok=100 failed=0 ' "$tmp/probe.out"
echo "# under the load: $(cat "$tmp/probe.out")"
treq "$T" /v1/tokens/web
check "curl over TCP: the token" sh -c '[ "$0" = 200 ] && grep -qF "\"token\":\"$1\"" "$2"' \
    "$status" "$T_WEB" "$tmp/out"
failed=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    ureq "$S" /v1/tokens/web
    [ "$status" = 200 ] || failed=$((failed + 1))
done
check "10 lookups over the unix socket: all 200" [ "$failed" -eq 0 ]
until_figure cut 500
check "the slow connections were cut to make room (cut=$(figure cut))" \
    [ "$(figure cut)" -ge 500 ]
stop_load
echo "# the load: $(tail -n 1 "$tmp/load.out")"

# Once it is gone, the agent serves as before and no connection is left behind.
treq "$T" /healthz
check "after the load: TCP healthz 200" is 200
stop_agent a
check "SIGTERM: exit 0" status_is 0
check "the log holds no token and no key" \
    sh -c '! grep -qF "$0" "$2" && ! grep -qF "$(head -n 1 "$1")" "$2"' "$T_WEB" "$KEY" "$tmp/a.log"
check "no sanitizer report in the agent's log" no_sanitizer_reports
checks_done
