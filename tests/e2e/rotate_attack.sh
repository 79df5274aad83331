#!/bin/sh
# Credential rotation against a careless admin and a hostile environment: a real
# serve-api, real caches. The --exec command inherits no descriptor of ours (the
# API's connections, the cache); a successor marked for deletion is never "held",
# so the old credential is not retired with it (both deleted: no working token);
# a retirement turned into a conflict and kept with --take-remote stops the
# rotation instead of leaving it "retiring" for ever; an old credential changed
# since its successor copied it is never retired by the sync on its own; a
# successor renamed by hand does not take the old one's name away; a refused
# successor queued again lets its rotation go on.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
trap 'stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM

DB="$tmp/cache.db"
export RAMPART_DB="$DB" RAMPART_ROTATE_QUIET=1s
start_server attack || exit 1
id_of() { sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out"; }
json_field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" "$tmp/out" | head -n 1; }
on_server() { api GET "/credentials/$1" | grep -q "\"id\":\"$1\""; }
gone_from_server() { api GET "/credentials/$1" | grep -q '"status_code":404'; }
failed_with() { [ "$status" -ne 0 ] && err_has "$1"; }
# due OLD: polls `plan` until it shows OLD's retirement due (20 s at most).
due() {
    deadline=$(($(date +%s) + 20))
    until "$RAMPART" plan | grep -q "^- cred $1 .*retire"; do
        [ "$(date +%s)" -gt "$deadline" ] && return 1
        sleep 0.2
    done
}

# An --exec too long to keep: refused at the door, naming the flag, no cache made.
run --db "$tmp/none.db" creds rotate web --exec "$(printf '%01100d' 0)"
check "an --exec over 1024 bytes is refused, naming --exec, before the cache opens" \
    sh -c '[ "$0" -eq 2 ] && grep -q "exec: the command is longer than 1024" "$1" &&
        [ ! -e "$2" ]' "$status" "$tmp/err" "$tmp/none.db"

# --exec's descriptors: stdin, stdout, stderr, nothing else of ours.
run creds create --description fds --sync
FD_OLD=$(id_of)
# (ls itself: its own descriptor 3 reads the directory)
EXEC="sh -c 'exec ls /proc/self/fd >\"$tmp/fd.out\"'"
run creds rotate fds --grace 1h --exec "$EXEC" --sync
check "setup: --exec ran" test -s "$tmp/fd.out"
check "--exec inherits no descriptor but 0, 1 and 2 (none of the API's sockets)" \
    sh -c '[ "$(sort -n "$0" | tr "\n" " ")" = "0 1 2 3 " ]' "$tmp/fd.out"

# The successor deleted by hand during the grace period: the old one stays.
run creds create --description del --sync
D_OLD=$(id_of)
run creds rotate del --grace 1s --sync --json
D_NEW=$(json_field new_id)
run creds delete "$D_NEW"
run creds rotate "$D_OLD" --finish
check "--finish with the successor marked for deletion is refused" \
    failed_with "successor .* is deleting: the old one stays"
sleep 2 # the grace period (1 s) passes: a wait for time itself, not for a result
run plan
check "plan: a successor marked for deletion does not make the old one's retirement due" \
    sh -c '! grep -q "^- cred $1 .*retire" "$0"' "$tmp/out" "$D_OLD"
run sync
check "the sync deletes the successor, never the old one with it" on_server "$D_OLD"
check "...and the old credential's token is still held here" \
    sh -c '"$0" creds token "$1" >/dev/null' "$RAMPART" "$D_OLD"

# A retirement that became a conflict (a colleague changed the old credential),
# resolved by keeping it: the rotation stops, it can be cancelled or started again.
run creds create --description kept --sync
K_OLD=$(id_of)
run creds rotate kept --grace 1s --sync --json
K_NEW=$(json_field new_id)
check "setup: the retirement becomes due" due "$K_OLD"
api PATCH "/credentials/$K_OLD" '{"description": "kept-theirs"}' >/dev/null
run sync
run creds get "$K_OLD"
check "setup: the retirement became a conflict" out_has "^state  *conflict"
run creds resolve "$K_OLD" --take-remote
run creds get "$K_OLD"
check "kept with --take-remote: the rotation says it stopped, not 'retiring'" \
    sh -c 'grep -q "^rotation  *stopped:.*kept" "$0"' "$tmp/out"
run creds rotate "$K_OLD" --cancel --sync
check "...and it can be cancelled" status_is 0
check "...the successor deleted remotely" gone_from_server "$K_NEW"
check "...the old one kept" on_server "$K_OLD"
run creds rotate "$K_OLD" --grace 1h --sync
check "...and the old one can be rotated again" status_is 0
# A colleague changes the old credential during the grace period and a sync
# takes the change in: its retirement would delete a changed object, so it waits.
run creds create --description moved --acl bind:a.example.com --sync
M_OLD=$(id_of)
run creds rotate moved --grace 1s --sync
api PATCH "/credentials/$M_OLD" '{"acl": ["bind:b.example.com"]}' >/dev/null
run sync
sleep 2 # the grace period (1 s) passes: a wait for time itself, not for a result
run plan --detailed-exitcode
check "plan: the old one changed since the copy: no retirement due, said why (exit 0)" \
    sh -c '[ "$0" -eq 0 ] && grep -q "no longer matches its successor" "$1" &&
        ! grep -q "^- cred $2" "$1"' "$status" "$tmp/out" "$M_OLD"
run sync
check "...and the sync keeps it remotely" on_server "$M_OLD"
run creds rotate moved --finish --sync
check "--finish retires it anyway" gone_from_server "$M_OLD"
# The successor renamed by hand: the old one keeps its name, and the agent keeps
# serving it by that name (no rotation pair shares it any more).
run creds create --description renamed --sync
R_OLD=$(id_of)
T_R=$("$RAMPART" creds token "$R_OLD")
run creds rotate renamed --grace 1h --sync --json
R_NEW=$(json_field new_id)
run creds update "$R_NEW" --description renamed-next
mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
start_agent a --listen "unix:$tmp/run/a.sock"
ureq "$sock" /v1/tokens/renamed
check "the successor renamed: its old name still gets the old token (no 404)" \
    sh -c '[ "$0" = 200 ] && grep -q "\"token\":\"$1\"" "$2"' "$status" "$T_R" "$tmp/out"
ureq "$sock" /v1/tokens/renamed-next
check "...and the new name the successor's" \
    sh -c '[ "$0" = 200 ] && grep -q "\"id\":\"$1\"" "$2"' "$status" "$R_NEW" "$tmp/out"
# A successor the server refused, queued again by hand (creds retry) and then
# created: the rotation goes on instead of staying "stopped" for ever.
stop_server
start_server attack --faults "create_cred:403@2" || exit 1
run creds create --description retried --sync
Q_OLD=$(id_of)
run creds rotate retried --grace 1s --sync --json
Q_NEW=$(json_field new_id)
run creds get "$Q_OLD"
check "setup: the refused successor stopped the rotation" out_has "^rotation  *stopped:"
run creds retry "$Q_NEW"
run sync
run creds get "$Q_OLD"
check "the successor retried and created: the rotation is no longer stopped" \
    sh -c '! grep -q "^rotation  *stopped" "$0" && grep -q "^rotation " "$0"' "$tmp/out"
check "...its retirement becomes due" due "$Q_OLD"
run sync
check "...and the old one retires as any" gone_from_server "$Q_OLD"
checks_done
