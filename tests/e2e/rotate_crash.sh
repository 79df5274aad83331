#!/bin/sh
# Crash safety of a rotation: kill -9 the sync of a `creds rotate --now` at ten
# points (the successor's POST, the marker's look and PATCH, the --exec, the
# retirement's look and DELETE: each request slowed by serve-api --faults so a
# kill lands inside it), and the agent itself once. After each kill the agent
# still serves a token for the name; after the next complete sync every
# credential on the server has its token here, and the name is served.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
trap 'stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM

DB="$tmp/cache.db"
export RAMPART_DB="$DB" RAMPART_ROTATE_QUIET=1s
start_server crash --faults \
    "create_cred:delay=200@1+,patch_cred:delay=200@1+,get_cred:delay=200@1+,delete_cred:delay=200@1+" ||
    exit 1
mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
start_listening_agent a --listen "unix:$tmp/run/a.sock" --listen tcp:127.0.0.1:0 \
    --key-file "$tmp/keys/agent.key" --rate 0

served() { # NAME: the agent hands out a token for it
    ureq "$S" "/v1/tokens/$1"
    [ "$status" = 200 ] && grep -q '"token":"' "$tmp/out"
}
held_tokens() { # every credential on the server has its token here
    for id in $(server_ids credentials); do
        "$RAMPART" creds token "$id" >/dev/null 2>&1 || return 1
    done
}

# Milliseconds into the sync: the POST (200 ms), its look and PATCH (400), the
# command (300), the retirement's look and DELETE (400), and between them.
points="50 150 250 350 500 650 800 950 1150 1350"
lost=0
unheld=0
r=0
for ms in $points; do
    r=$((r + 1))
    name="crash-$r"
    "$RAMPART" creds create --description "$name" --sync >/dev/null 2>&1
    "$RAMPART" creds rotate "$name" --now --exec "sleep 0.3" >/dev/null 2>&1
    "$RAMPART" sync >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk "BEGIN { print $ms / 1000 }")" # where the kill lands, not a wait for a result
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    served "$name" || { lost=$((lost + 1)); echo "# after a kill at $ms ms: $name not served"; }
    # Where it landed (for the reader): the rows' states, the link's (read-only).
    echo "# kill at $ms ms: $("$RAMPART" creds list --filter "$name" --no-headers |
        awk '{ printf "%s ", $2 }')$(sqlite3 "$DB" "SELECT r.state, r.exec_state FROM
        rotations AS r JOIN credentials AS c ON c.id IN (r.old_id, r.new_id)
        WHERE c.description = '$name' LIMIT 1")"
    # The next complete sync (and one more for a retirement it made due).
    sync_until_converged "$DB"
    "$RAMPART" sync >/dev/null 2>&1
    { held_tokens && served "$name"; } ||
        { unheld=$((unheld + 1)); echo "# after the sync that followed a kill at $ms ms: a token not held"; }
done
check "after each kill -9 of the sync, the agent serves a token for the name" \
    sh -c '[ "$0" -eq 0 ]' "$lost"
check "after the next complete sync, no credential remotely without its token here" \
    sh -c '[ "$0" -eq 0 ]' "$unheld"

# The agent killed mid-rotation: a new one serves the successor.
"$RAMPART" creds create --description agentkill --sync >/dev/null 2>&1
"$RAMPART" creds rotate agentkill --grace 1h --sync >/dev/null 2>&1
kill -9 "$pid_a" 2>/dev/null
wait "$pid_a" 2>/dev/null
start_listening_agent b --listen "unix:$tmp/run/b.sock" --listen tcp:127.0.0.1:0 \
    --key-file "$tmp/keys/agent.key" --rate 0
NEW=$("$RAMPART" creds list -o name --filter agentkill | tail -n 1)
ureq "$S" /v1/tokens/agentkill
check "an agent restarted after kill -9 serves the successor" \
    sh -c '[ "$0" = 200 ] && grep -q "\"id\":\"$1\"" "$2"' "$status" "$NEW" "$tmp/out"

sync_until_converged "$DB"
check "after the last complete sync, no credential remotely without its token here" held_tokens
run creds list
check "every --now rotation finished: one credential per name" \
    sh -c '[ "$(grep -c " crash-" "$0")" -eq 10 ]' "$tmp/out"
sqlite3 "$DB" 'PRAGMA integrity_check' >"$tmp/out" 2>"$tmp/err"
status=$?
check "the cache passes integrity_check" out_has '^ok$'
checks_done
