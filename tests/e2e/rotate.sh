#!/bin/sh
# Credential rotation end to end: a real serve-api, a real agent over its unix
# socket, real caches. A loop fetches the token by name every 100 ms through the
# whole rotation: never an error, and the successor's token from the first fetch
# that starts after the successor is held. The old credential is deleted remotely
# only after the grace period and the quiet period (shortened: a few seconds),
# --finish and --cancel do what they say, --now deletes in the same sync, a failed
# successor stops the rotation, --older-than picks by age.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
trap 'touch "$tmp/stop"; stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM

DB="$tmp/cache.db"
# A quiet period of 5 s: the agent writes hand-out times every second, in whole
# seconds, so the cache may see the last one up to 2 s late.
export RAMPART_DB="$DB" RAMPART_ROTATE_QUIET=5s
start_server rotate || exit 1
token_of() { sed -n 's/^token: //p' "$tmp/out"; }
id_of() { sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out"; }
json_field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" "$tmp/out" | head -n 1; }
on_server() { [ "$(api GET "/credentials/$1" | grep -c "\"id\":\"$1\"")" -eq 1 ]; }
gone_from_server() { api GET "/credentials/$1" | grep -q '"status_code":404'; }

# Bad input at the door: a clear message, exit 2, and no cache made for it.
run --db "$tmp/none.db" creds rotate web --grace 5y
check "a bad --grace is refused, naming the forms" \
    sh -c '[ "$0" -eq 2 ] && grep -q "\-\-grace: .5y. is not a duration" "$1" &&
        [ ! -e "$2" ]' "$status" "$tmp/err" "$tmp/none.db"
run --db "$tmp/none.db" creds rotate --older-than 90d --limit 0
check "--limit 0 is refused" refused 2 "limit must be a whole number"
run --db "$tmp/none.db" creds rotate web --now --cancel
check "two of --now, --finish, --cancel are refused" refused 2 "give one of"
run --db "$tmp/none.db" creds rotate web --exec "'unclosed"
check "an --exec that does not split into words is refused" refused 2 "exec: .*quote"

run creds create --description web --acl bind:web.example.com --metadata team=a --sync
OLD=$(id_of) T_OLD=$(token_of)
run sync # the owner the server gave it
check "setup: a credential with its token" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$OLD" "$T_OLD"

mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
start_listening_agent a --listen "unix:$tmp/run/a.sock" --listen tcp:127.0.0.1:0 \
    --key-file "$tmp/keys/agent.key" --rate 0

# The loop: one line per fetch, "HELD STATUS TOKEN", HELD 1 when the fetch started
# after the successor was held (the flag file is made once rotate --sync returned).
fetch_loop() {
    while [ ! -f "$tmp/stop" ]; do
        h=0
        [ -f "$tmp/held" ] && h=1
        code=$(curl -sS --max-time 5 -o "$tmp/loop.body" -w '%{http_code}' \
            --unix-socket "$S" http://localhost/v1/tokens/web 2>/dev/null)
        tok=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' "$tmp/loop.body")
        echo "$h $code $tok" >>"$tmp/loop.log"
        sleep 0.1
    done
}
fetch_loop &
loop_pid=$!
# Some fetches of the old token first.
until [ -f "$tmp/loop.log" ] && [ "$(wc -l <"$tmp/loop.log")" -ge 3 ]; do sleep 0.05; done

EXEC="sh -c 'echo \$RAMPART_ROTATE_OLD_ID \$RAMPART_ROTATE_NEW_ID >\"$tmp/exec.out\"; env >\"$tmp/exec.env\"'"
OWNER=$("$RAMPART" creds get "$OLD" --json | sed -n 's/.*"owner_id": "\([^"]*\)".*/\1/p')
run creds rotate web --grace 6s --exec "$EXEC" --sync --json
touch "$tmp/held"
NEW=$(json_field new_id)
T_NEW=$("$RAMPART" creds token "$NEW" 2>/dev/null)
check "rotate --sync: the successor is created and its token held" \
    sh -c '[ "$0" -eq 0 ] && [ -n "$1" ] && [ "$1" != "$2" ] && [ "$3" != "$4" ]' \
    "$status" "$T_NEW" "$T_OLD" "$NEW" "$OLD"
run creds get "$NEW" --json
check "the successor has the old one's description, ACL, metadata and owner" \
    sh -c 'grep -q "\"description\": \"web\"" "$0" && grep -q "bind:web.example.com" "$0" &&
        grep -q "\"metadata\": \"team=a\"" "$0" &&
        grep -q "\"owner_id\": \"$1\"" "$0"' "$tmp/out" "$OWNER"
check "--exec ran with both ids in its environment" \
    sh -c 'grep -qx "$1 $2" "$0"' "$tmp/exec.out" "$OLD" "$NEW"
check "--exec's environment holds no token and no API key" \
    sh -c '! grep -q -e "$1" -e "$2" -e RAMPART_API_KEY "$0"' "$tmp/exec.env" "$T_OLD" "$T_NEW"

ureq "$S" "/v1/credentials/$OLD/token"
check "the old id during the grace period: its token, superseded_by the successor" \
    sh -c '[ "$0" = 200 ] && grep -q "\"token\":\"$1\"" "$2" &&
        grep -q "\"superseded_by\":\"$3\"" "$2"' "$status" "$T_OLD" "$tmp/out" "$NEW"
ureq "$S" /v1/tokens/web
check "by name: the successor (a rotation pair is not ambiguous)" \
    sh -c '[ "$0" = 200 ] && grep -q "\"token\":\"$1\"" "$2"' "$status" "$T_NEW" "$tmp/out"

run creds rotate web
check "a second rotation of the pair is refused while this one runs" \
    refused 2 "rotation is not over"
run plan --detailed-exitcode
check "plan during the grace period: the rotation shown, not a pending change (exit 0)" \
    sh -c '[ "$0" -eq 0 ] && grep -q "↻ $1 → $2" "$3"' "$status" "$OLD" "$NEW" "$tmp/out"
run sync
check "a sync within the grace period keeps the old credential remotely" on_server "$OLD"

# Past the grace period, the old id is still fetched (by an agent pinned to it,
# every 100 ms): the quiet period keeps it, through syncs until the grace period
# is surely over. Then nobody asks for it any more, and a sync retires it.
old_loop() {
    while [ ! -f "$tmp/stop_old" ]; do
        curl -sS --max-time 5 -o /dev/null --unix-socket "$S" \
            "http://localhost/v1/credentials/$OLD/token" 2>/dev/null
        sleep 0.1
    done
}
old_loop &
old_pid=$!
past=$(($(date +%s) + 8)) # held at most a few seconds ago; the grace period is 6 s
n=0
while [ "$(date +%s)" -le "$past" ] || [ $n -lt 3 ]; do
    run sync
    n=$((n + 1))
    sleep 0.2
done
check "while the old token is still handed out, syncs past the grace period keep it" \
    on_server "$OLD"
touch "$tmp/stop_old"
wait "$old_pid"
deadline=$(($(date +%s) + 30))
run plan --detailed-exitcode
until [ "$status" -ne 0 ] || [ "$(date +%s)" -gt "$deadline" ]; do
    sleep 0.2
    run plan --detailed-exitcode
done
check "plan once the retirement is due: a pending delete (exit 2)" \
    sh -c '[ "$0" -eq 2 ] && grep -q "^- cred $1 .*retire: rotated to $2" "$3"' \
    "$status" "$OLD" "$NEW" "$tmp/out"
check "...and the old credential is still on the server until the next sync" on_server "$OLD"
run sync
check "once not handed out for the quiet period, the next sync deletes it remotely" \
    gone_from_server "$OLD"
ureq "$S" "/v1/credentials/$OLD/token"
check "the old id afterwards: 410 with the successor's id" \
    sh -c '[ "$0" = 410 ] && grep -q "\"superseded_by\":\"$1\"" "$2"' "$status" "$NEW" "$tmp/out"

touch "$tmp/stop"
wait "$loop_pid"
check "the loop never got an error" sh -c '! grep -qv "^[01] 200 " "$0"' "$tmp/loop.log"
check "the loop got the old token before the rotation" \
    sh -c 'grep -q "^0 200 $1\$" "$0"' "$tmp/loop.log" "$T_OLD"
check "every fetch started after the successor was held got the successor's token" \
    sh -c 'grep "^1 " "$0" | grep -q . && ! grep "^1 " "$0" | grep -qv " $1\$"' \
    "$tmp/loop.log" "$T_NEW"
run creds get "$NEW"
check "creds get on the successor shows its predecessor" \
    sh -c 'grep -q "predecessor  *$1" "$0" && grep -q "rotation  *retired" "$0"' \
    "$tmp/out" "$OLD"

# --finish: retires at once; --cancel: the successor goes, the old one stays.
run creds create --description fin --sync
F_OLD=$(id_of)
run creds rotate fin --grace 30d --sync
run creds rotate fin --finish --sync
check "--finish: the old credential deleted remotely at once" gone_from_server "$F_OLD"
run creds create --description can --sync
C_OLD=$(id_of) T_C=$(token_of)
run creds rotate can --sync --json
C_NEW=$(json_field new_id)
run creds rotate "$C_OLD" --cancel --sync
check "--cancel: the successor is deleted remotely" gone_from_server "$C_NEW"
check "--cancel: the old one stays" on_server "$C_OLD"
ureq "$S" /v1/tokens/can
check "--cancel: the name serves the old token again" \
    sh -c '[ "$0" = 200 ] && grep -q "\"token\":\"$1\"" "$2"' "$status" "$T_C" "$tmp/out"

# --now: created, held, old deleted in the same sync.
run creds create --description leak --sync
L_OLD=$(id_of)
run creds rotate leak --now --sync
check "--now: the sync succeeds" status_is 0
check "--now: the old credential deleted in the same sync" gone_from_server "$L_OLD"

# --older-than: only the credentials created before that age (one made old here
# by hand: the server stamps created_at itself).
run creds create --description aged --sync
A_OLD=$(id_of)
run creds create --description young --sync
Y_OLD=$(id_of)
sqlite3 "$DB" "UPDATE credentials SET created_at = '2020-01-01T00:00:00Z' WHERE id = '$A_OLD'"
run creds rotate --older-than 90d --dry-run
check "--older-than 90d --dry-run: lists the old one only, changes nothing" \
    sh -c 'grep -q "^$1: would rotate" "$0" && ! grep -q "$2" "$0" &&
        ! "$3" creds list | grep -q "^local_"' "$tmp/out" "$A_OLD" "$Y_OLD" "$RAMPART"
run creds rotate --older-than 90d --limit 5 --sync
check "--older-than 90d: rotates the old one only" \
    sh -c '[ "$0" -eq 0 ] && "$3" creds get "$1" | grep -q "^successor" &&
        ! "$3" creds get "$2" | grep -q "^successor"' "$status" "$A_OLD" "$Y_OLD" "$RAMPART"

# A successor the server refuses (403) stops the rotation with the reason; the old
# one stays and keeps being served.
run creds create --description owned --sync
O_OLD=$(id_of) T_O=$(token_of)
stop_server
start_server rotate --faults "create_cred:403@1+" || exit 1
run creds rotate owned --sync
run creds get "$O_OLD"
check "a refused successor: the rotation stops with the server's reason" \
    sh -c 'grep -q "rotation  *stopped:.*forbidden" "$0"' "$tmp/out"
check "a refused successor: the old credential stays remotely" on_server "$O_OLD"
ureq "$S" /v1/tokens/owned
check "a refused successor: the name still serves the old token" \
    sh -c '[ "$0" = 200 ] && grep -q "\"token\":\"$1\"" "$2"' "$status" "$T_O" "$tmp/out"
run creds rotate owned --cancel
check "a stopped rotation can be cancelled (the failed successor removed)" \
    sh -c '[ "$0" -eq 0 ] && ! "$1" creds list | grep -q "^local_"' "$status" "$RAMPART"
checks_done
