# Helpers for tests that need the reference server: start/stop a real
# `rampart serve-api` process on a free loopback port, and read the server's state
# with curl (not with rampart: the server is the witness).
# Needs lib.sh sourced first.

SERVER_KEY=sk_e2e_$(date +%s)_$$
server_pid=""
server_url=""

# start_server NAME [serve-api options...]: a server with its own database.
start_server() {
    name=$1
    shift
    stop_server
    rm -f "$tmp/$name.ready"
    RAMPART_SERVE_API_KEY=$SERVER_KEY "$RAMPART" serve-api --listen tcp:127.0.0.1:0 \
        --db "$tmp/$name.server.db" --ready-file "$tmp/$name.ready" "$@" \
        2>>"$tmp/$name.server.log" &
    server_pid=$!
    tries=0
    while [ ! -s "$tmp/$name.ready" ]; do
        tries=$((tries + 1))
        if [ $tries -gt 500 ] || ! kill -0 "$server_pid" 2>/dev/null; then
            fail "serve-api did not start"
            cat "$tmp/$name.server.log"
            return 1
        fi
        sleep 0.02 # polling for the ready file, not waiting for a guess
    done
    server_url="http://$(cat "$tmp/$name.ready")"
    export RAMPART_API_URL="$server_url" RAMPART_API_KEY="$SERVER_KEY" RAMPART_RATE=0
}

stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    server_pid=""
}
trap 'stop_server; rm -rf "$tmp"' EXIT INT TERM

# api METHOD PATH [BODY]: one request to the server, body on stdout.
api() {
    if [ $# -ge 3 ]; then
        curl -sS -X "$1" -H "Authorization: Bearer $SERVER_KEY" -H "Service-Version: 2" \
            -H "Content-Type: application/json" --data "$3" "$server_url$2"
    else
        curl -sS -X "$1" -H "Authorization: Bearer $SERVER_KEY" -H "Service-Version: 2" \
            "$server_url$2"
    fi
}

# server_list COLLECTION FIELD: every value of FIELD over all pages, one per line,
# following next_page_uri as a client must.
server_list() {
    url="$server_url/$1?limit=100"
    while [ -n "$url" ]; do
        page=$(curl -sS -H "Authorization: Bearer $SERVER_KEY" -H "Service-Version: 2" "$url")
        printf '%s\n' "$page" | grep -o "\"$2\":\"[^\"]*\"" | sed "s/\"$2\":\"\(.*\)\"/\1/"
        url=$(printf '%s\n' "$page" | sed -n 's/.*"next_page_uri":"\([^"]*\)".*/\1/p')
    done
}

# server_count COLLECTION: how many objects the server holds.
server_count() { server_list "$1" uri | grep -c "/$1/"; }

# server_ids COLLECTION: ids of every object on the server.
server_ids() { server_list "$1" uri | grep "/$1/" | sed 's|.*/||'; }

# Sync until it converges (exit 0), at most 4 runs: a lost reply may need a second.
sync_until_converged() {
    n=0
    while [ $n -lt 4 ]; do
        "$RAMPART" --db "$1" sync >"$tmp/out" 2>"$tmp/err"
        status=$?
        [ $status -eq 0 ] && return 0
        n=$((n + 1))
    done
    return 1
}
