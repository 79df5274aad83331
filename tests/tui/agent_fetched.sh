#!/bin/sh
# The delete question names the credentials whose token a local agent fetched in
# the last 7 days: a real `rampart agent` hands a token out over its unix socket and
# writes the fetch time to the cache when it stops; a headless console started
# afterwards (another process) names that credential, and only that one.
here=$(dirname "$0")
. "$here/../e2e/lib.sh"
. "$here/../e2e/server.sh"
. "$here/../e2e/agent_lib.sh"
. "$here/lib.sh"
trap 'stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM

DB="$tmp/cache.db"
export RAMPART_DB="$DB"

start_server fetched || exit 1
id_of() { sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out"; }
run creds create --description web --sync
WEB=$(id_of)
run creds create --description idle --sync
IDLE=$(id_of)
stop_server
check "setup: two credentials synced with their tokens" \
    sh -c '[ -n "$0" ] && [ -n "$1" ]' "$WEB" "$IDLE"

mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
start_agent a --listen "unix:$tmp/run/a.sock"
check "agent: listening" [ -n "$sock" ]
ureq "$sock" "/v1/credentials/$WEB/token"
check "agent: the token of web handed out" replied 200 "\"id\":\"$WEB\""
stop_agent a
check "agent: stopped cleanly" status_is 0
check "agent: the audit line is still on stderr" \
    grep -q "token peer=uid:[0-9]* by=id id=\"$WEB\" cred=$WEB result=ok" "$tmp/a.log"
check "cache: the fetch time of web only, written at stop (ids and times, no token)" \
    sh -c '[ "$(sqlite3 "$0" "SELECT cred_id FROM token_fetches")" = "$1" ]' "$DB" "$WEB"

# play NAME: the key script on stdin, run headless; one file per dumped screen.
play() { headless_play "$DB" "$1"; }

# Both marked, then web alone (the filter puts the cursor on it).
play delete <<'EOF2'
key :
type creds
key <Enter>
key <Space> j <Space>
key d
dump
key <Esc> U /
type web
key <Enter> d
dump
key <Esc>
EOF2
check "console: exit 0" status_is 0
check "marked: the question" screen 1 "Delete 2 marked credentials?"
check "marked: says a local agent fetched a token lately" \
    screen 1 "Fetched by a local agent in the last 7 days:"
check "marked: names web, fetched just now" screen 1 "  $WEB (web) just now"
check "marked: not idle, never fetched" no_screen 1 "  $IDLE (idle)"
check "single row: the question" screen 2 "Delete 1 credential?"
check "single row: names web too" screen 2 "  $WEB (web) just now"
checks_done
exit 0
