#!/bin/sh
# Two admins share an account: two caches (real database files) on one real
# serve-api over loopback. No write goes out without a fresh look at its object:
# a push-only sync over a colleague's edit, and a delete from a stale cache,
# become conflicts and the remote keeps what the colleague did; resolving either
# way does what it says. A command's --sync is about that command's rows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
A="$tmp/a.db"
B="$tmp/b.db"

start_server main || exit 1

# json EXPR: EXPR (Python, over `d`, the JSON document in $tmp/out) holds.
json() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$tmp/out" "$1"
}
# The server's copy of one object, as JSON in $tmp/out.
server_get() { api GET "/$1/$2" >"$tmp/out"; }
# Requests the server logged since the mark (a line count of its log).
mark() { wc -l <"$tmp/main.server.log"; }
since() { tail -n +"$(($1 + 1))" "$tmp/main.server.log"; }

# ---- push-only over a colleague's edit ----

run --db "$A" rules create --cidr 10.1.0.0/16 --policy $P --action allow \
    --description first --sync
rule=$("$RAMPART" --db "$A" rules list -o name)
run --db "$B" sync
check "setup: both caches hold the rule" status_is 0
run --db "$B" rules update "$rule" --description mine
run --db "$A" rules update "$rule" --description colleague --sync
server_get ip_policy_rules "$rule"
check "... description colleague" json 'd["description"] == "colleague"'
m=$(mark)
run --db "$B" sync --push-only
check "B sync --push-only over it: not converged (exit 4)" status_is 4
check "... one new conflict, nothing updated" out_has "1 new conflict"
check "... said in the singular" out_lacks "1 new conflicts"
since "$m" >"$tmp/log.txt"
check "... the log shows one GET and no PATCH" \
    sh -c "grep -q '^GET /ip_policy_rules/$rule 200' '$tmp/log.txt' && ! grep -q '^PATCH' '$tmp/log.txt'"
server_get ip_policy_rules "$rule"
check "the server keeps the colleague's value" json 'd["description"] == "colleague"'
run --db "$B" rules get "$rule" --json
check "B: a fields conflict with both values" \
    json 'd["state"] == "conflict" and d["edit"]["conflict"] == "fields" and
          d["edit"]["fields"]["description"]["local"] == "mine" and
          d["edit"]["fields"]["description"]["remote"] == "colleague"'
run --db "$B" rules resolve "$rule" --take-remote --sync
check "resolve --take-remote --sync: exit 0" status_is 0
run --db "$B" rules get "$rule" --json
check "... B has the colleague's value, synced" \
    json 'd["state"] == "synced" and d["description"] == "colleague"'

# Both edit again; B keeps its own on purpose.
run --db "$B" rules update "$rule" --description "mine again"
run --db "$A" rules update "$rule" --description "colleague again" --sync
run --db "$B" sync --push-only
check "a second crossing edit: a conflict again" out_has "1 new conflict"
run --db "$B" rules resolve "$rule" --keep-local --sync
check "resolve --keep-local --sync: exit 0" status_is 0
server_get ip_policy_rules "$rule"
check "... the server now has B's value" json 'd["description"] == "mine again"'

# ---- a stale delete of a rule ----

run --db "$A" rules create --cidr 10.4.0.0/16 --policy $P --action deny \
    --description "block partner" --sync
partner=$("$RAMPART" --db "$A" rules list --filter "10.4.0.0" -o name)
run --db "$B" sync
run --db "$A" rules update "$partner" --cidr 203.0.113.0/24 --description "block attacker" \
    --sync
check "A changed the rule" status_is 0
run --db "$B" rules delete "$partner" --sync
check "B deletes the rule it knows: not converged (exit 4)" status_is 4
check "... said: changed remotely, not deleted" err_has "changed remotely since this cache saw it"
server_get ip_policy_rules "$partner"
check "the rule stays on the server, as A made it" \
    json 'd["cidr"] == "203.0.113.0/24" and d["description"] == "block attacker"'
run --db "$B" rules get "$partner" --json
check "B: a conflict 'changed' holding the remote's values" \
    json 'd["state"] == "conflict" and d["edit"]["conflict"] == "changed" and
          d["cidr"] == "203.0.113.0/24"'
run --db "$B" plan
check "B's plan says what changed" \
    out_has "deleted here, changed remotely: cidr 10.4.0.0/16 -> 203.0.113.0/24"
run --db "$B" check $P 203.0.113.9
check "until resolved it stays in force for check" out_has "denied"
run --db "$B" sync
check "a full sync keeps the conflict (exit 4)" status_is 4
server_get ip_policy_rules "$partner"
check "... and the rule" json 'd["cidr"] == "203.0.113.0/24"'
run --db "$B" rules resolve "$partner" --keep-local --sync
check "resolve --keep-local --sync deletes it anyway: exit 0" status_is 0
gone_from_server() { ! server_ids ip_policy_rules | grep -qx "$1"; }
check "... the server has it no more" gone_from_server "$partner"

# ---- a stale delete of a credential: its token is not lost ----

run --db "$A" creds create --description web --sync
cred=$(sed -n 's/^credential \(cr_[0-9A-Za-z]*\) .*/\1/p' "$tmp/out")
check "A created a credential and holds its token" test -n "$cred"
run --db "$B" sync
run --db "$A" creds update "$cred" --description prod-web --sync
run --db "$B" creds delete "$cred" --sync
check "B deletes the credential it knows: exit 4" status_is 4
cred_on_server() { server_ids credentials | grep -qx "$1"; }
check "the credential stays on the server" cred_on_server "$cred"
run --db "$A" creds token "$cred"
holds_token() { status_is 0 && out_has "_"; }
check "... and A still holds its token" holds_token
run --db "$B" creds get "$cred" --json
check "B: a conflict 'changed' with the new description" \
    json 'd["state"] == "conflict" and d["description"] == "prod-web"'
run --db "$B" creds resolve "$cred" --take-remote --sync
check "resolve --take-remote: kept, synced" status_is 0
run --db "$B" creds get "$cred" --json
check "... B's row is synced with the remote's values" \
    json 'd["state"] == "synced" and d["description"] == "prod-web"'

# ---- a command's --sync is about its own rows ----

run --db "$A" sync
run --db "$B" rules update "$rule" --description "b wants this"
run --db "$A" rules update "$rule" --description "a wants that" --sync
run --db "$B" sync --push-only
check "setup: B has an unrelated rule in conflict" out_has "1 new conflict"
run --db "$B" creds create --description unrelated --sync
check "creds create --sync exits 0 despite the conflict" status_is 0
check "... and says the rest waits" err_has "1 other change is queued or waiting"
run --db "$B" rules get "$rule" --json
check "... the conflict is left as it was" json 'd["state"] == "conflict"'
m=$(mark)
run --db "$B" creds update "$("$RAMPART" --db "$B" creds list --filter unrelated -o name)" \
    --description "unrelated 2" --sync
check "creds update --sync: exit 0" status_is 0
since "$m" >"$tmp/log.txt"
check "... two requests: the look and the PATCH, no listing" \
    sh -c "[ \"\$(grep -c . '$tmp/log.txt')\" -eq 2 ] && grep -q '^GET /credentials/cr_' '$tmp/log.txt' &&
           grep -q '^PATCH /credentials/cr_' '$tmp/log.txt'"

# ---- apply --sync after a refused connection, and after a kill -9 ----

printf '198.51.100.0/24\n198.51.100.7\n192.0.2.0/24\n' >"$tmp/list.txt"
dead_url="http://127.0.0.1:9"
RAMPART_API_URL=$dead_url "$RAMPART" --db "$A" apply --policy $P --action deny \
    --name edge --sync "$tmp/list.txt" >"$tmp/out" 2>"$tmp/err"
status=$?
check "apply --sync with the remote refusing connections: not 0" test "$status" -ne 0
run --db "$A" apply --policy $P --action deny --name edge "$tmp/list.txt"
still_queued() { status_is 0 && out_lacks 'Nothing to do' && out_has 'still queued from an earlier run'; }
check "apply again without --sync: not 'Nothing to do', they are queued" still_queued
run --db "$A" apply --policy $P --action deny --name edge --sync "$tmp/list.txt"
check "apply --sync again: pushes them, exit 0" status_is 0
# on_server N PATTERN...: the server lists exactly N cidrs matching the patterns.
on_server() {
    want=$1
    shift
    [ "$(server_list ip_policy_rules cidr | grep -c "$@")" -eq "$want" ]
}
check "... the server has the three rules" on_server 3 -e '^198.51.100' -e '^192.0.2.0/24$'


# kill -9 while the second create waits for its (delayed) reply.
start_server main --faults "create_rule:delay=20000@2" || exit 1
printf '203.0.113.0/25\n203.0.113.128/25\n100.64.0.0/10\n' >"$tmp/list2.txt"
"$RAMPART" --db "$A" apply --policy $P --action allow --name kill9 --sync "$tmp/list2.txt" \
    >"$tmp/kill.out" 2>"$tmp/kill.err" &
victim=$!
n=0
until grep -q '^POST /ip_policy_rules 201' "$tmp/main.server.log" 2>/dev/null &&
    [ "$(sqlite3 "$A" "SELECT count(*) FROM rules WHERE state = 'creating'")" -ge 1 ]; do
    n=$((n + 1))
    [ $n -lt 500 ] || break
    sleep 0.02 # polling for the second create to be in flight
done
kill -9 $victim 2>/dev/null
wait $victim 2>/dev/null
check "kill -9 with a create in flight" \
    sh -c "[ \"\$(sqlite3 '$A' \"SELECT count(*) FROM rules WHERE state IN ('creating', 'new')\")\" -ge 1 ]"
start_server main || exit 1
run --db "$A" apply --policy $P --action allow --name kill9 "$tmp/list2.txt"
check "after kill -9: the apply's rows are still queued" out_has "still queued from an earlier run"
run --db "$A" apply --policy $P --action allow --name kill9 --sync "$tmp/list2.txt"
check "apply --sync after kill -9: exit 0" status_is 0
check "... every entry once on the server, none twice" \
    on_server 3 -e '^203.0.113.0/25$' -e '^203.0.113.128/25$' -e '^100.64.0.0/10$'
run --db "$A" plan
check "... and A's plan for them is empty" out_lacks "kill9"
# ---- a create the remote holds already, with another description ----
run --db "$A" rules create --cidr 10.50.0.0/16 --policy $P --action allow \
    --description theirs --sync
run --db "$B" rules create --cidr 10.50.0.0/16 --policy $P --action allow --description mine
run --db "$B" sync
check "a create the remote already holds (400, then the listing): exit 4, a new conflict" \
    sh -c '[ "$0" -eq 4 ] && grep -q "new conflict" "$1"' "$status" "$tmp/out"
dup=$("$RAMPART" --db "$A" rules list --filter 10.50.0.0 -o name)
run --db "$B" rules get "$dup" --json
check "... the description given here is kept beside the remote's, not dropped" \
    json 'd["state"] == "conflict" and d["description"] == "mine" and
          d["edit"]["fields"]["description"]["remote"] == "theirs"'
server_get ip_policy_rules "$dup"
check "... and the server keeps its own" json 'd["description"] == "theirs"'
run --db "$B" rules resolve "$dup" --keep-local --sync
server_get ip_policy_rules "$dup"
check "resolve --keep-local --sync: the server now has it" json 'd["description"] == "mine"'

# ---- the plan says what the sync sends, and the sync sends exactly that ----
run --db "$A" sync
run --db "$A" rules create --cidr 198.18.0.0/15 --policy $P --action deny
run --db "$A" rules update "$rule" --description "planned"
run --db "$A" creds create --description planned
run --db "$A" plan
check "plan: the requests by method (a credential's create: POST, look, PATCH)" \
    out_has "^Requests: 6 (2 POST, 0 DELETE, 2 PATCH, 2 GET), then one listing of about 2 pages"
m=$(mark)
run --db "$A" sync
check "the sync converges" status_is 0
n=0
while [ "$(($(mark) - m))" -lt 8 ] && [ $n -lt 200 ]; do
    n=$((n + 1))
    sleep 0.01 # polling: the server logs a request after replying
done
since "$m" >"$tmp/log.txt"
writes_and_looks() {
    [ "$(grep -c -E '^(POST|PATCH|DELETE) |^GET /[a-z_]+/[a-z]+_' "$tmp/log.txt")" -eq 6 ] &&
        [ "$(grep -c -E '^GET /(ip_policy_rules|credentials)[? ]' "$tmp/log.txt")" -eq 2 ]
}
check "... and sent exactly those 6, then the 2 listing pages" writes_and_looks
checks_done
exit 0
