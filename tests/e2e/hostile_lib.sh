# Helpers of the tests against a hostile remote (hostile_token.sh, and the
# console's tests/tui/tmux_escape.sh): start/stop hostile_server.py, a remote whose
# create replies hold a chosen token. Only defines functions: sourced after lib.sh.
# A test from another folder sets HOSTILE_SERVER to the script's path first.

hostile_pid=""

stop_hostile() {
    [ -n "$hostile_pid" ] && kill "$hostile_pid" 2>/dev/null && wait "$hostile_pid" 2>/dev/null
    hostile_pid=""
}

# start_hostile MODE: the server answering creates with that token (escape, long,
# good: see hostile_server.py), and the environment that points rampart at it.
start_hostile() {
    stop_hostile
    rm -f "$tmp/hostile.ready"
    python3 "${HOSTILE_SERVER:-$(dirname "$0")/hostile_server.py}" "$1" "$tmp/hostile.ready" &
    hostile_pid=$!
    hostile_n=0
    while [ ! -s "$tmp/hostile.ready" ] && [ $hostile_n -lt 200 ]; do
        sleep 0.05 # polling for the ready file, not waiting for a guess
        hostile_n=$((hostile_n + 1))
    done
    export RAMPART_API_URL="http://127.0.0.1:$(cat "$tmp/hostile.ready")" \
        RAMPART_API_KEY=sk_hostile RAMPART_RATE=0
}
