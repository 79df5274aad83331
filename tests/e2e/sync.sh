#!/bin/sh
# Sync end to end: real rampart processes against a real serve-api over loopback.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
A="$tmp/a.db"
B="$tmp/b.db"
start_server main || exit 1

# Offline edits on machine A, then a plan, then the sync.
run --db "$A" rules create --cidr 10.0.0.0/8 --policy $P1 --action allow --description office
run --db "$A" rules create --cidr 2001:db8::/32 --policy $P1 --action deny
run --db "$A" creds create --description "web agent" --acl 'bind:*.example.com'
run --db "$A" status
check "status before any sync: last sync never" out_has "^last sync  *never$"
run --db "$A" plan
check "plan: two rules and a credential to create" out_has "Plan: 3 to create"
check "plan: sent nothing" [ "$(server_count ip_policy_rules)" -eq 0 ]
run --db "$A" sync
check "sync: converged (exit 0)" status_is 0
check "sync: says what it did" out_has "3 created"
check "... and no update: taking a new credential's marker away is no one's edit" \
    out_lacks "updated"
run --db "$A" sync --json
check "sync --json: nothing refused, no failure" \
    out_has '"refused": 0, .*"failure": null, "row_failure": null}'
check "server holds 2 rules" [ "$(server_count ip_policy_rules)" -eq 2 ]
check "server holds 1 credential" [ "$(server_count credentials)" -eq 1 ]
run --db "$A" plan
check "plan after sync: nothing to do" out_has "Nothing to do"
run --db "$A" status
check "status after the sync: the last sync's time and age" \
    out_has "^last sync  *20[0-9-]*T[0-9:]*Z ([0-9]*s ago)$"
cred=$(server_ids credentials)
run --db "$A" creds token "$cred"
check "machine A holds the token of the credential it created" out_has "_"
token=$(cat "$tmp/out")
check "the token is the credential's (id body + _ + 21 chars)" \
    [ "${token%_*}" = "${cred#cr_}" ]
run --db "$A" creds list --json
check "credential list never shows the token" out_lacks "$token"

# A second machine pulls the same state.
run --db "$B" sync --pull-only
check "machine B: pull converged" status_is 0
run --db "$B" rules list
check "machine B sees both rules" out_lines 3
run --db "$B" creds token "$cred"
check "machine B does not hold the token: exit 3" refused 3 "this machine does not hold its token"

# A rule deleted on the server is shown for review, not recreated.
rule=$(server_ids ip_policy_rules | head -n 1)
api DELETE "/ip_policy_rules/$rule" >/dev/null
run --db "$A" sync
check "sync after a remote deletion: exit 0" status_is 0
run --db "$A" plan
check "plan shows the remote deletion with ~" out_has "^~ rule $rule"
check "the deleted rule was not recreated" [ "$(server_count ip_policy_rules)" -eq 1 ]

# A delete whose object is already gone on the server (404) counts as done.
other=$(server_ids ip_policy_rules | head -n 1)
run --db "$B" rules delete "$other"
api DELETE "/ip_policy_rules/$other" >/dev/null
run --db "$B" sync
check "404 on delete counts as done" status_is 0
run --db "$B" rules get "$other"
check "... and the row is gone" status_is 3

# Rejected by the server: failed, with its message, shown by plan.
run --db "$A" rules create --cidr 10.0.0.0/8 --policy $P1 --action deny
check "local check catches the duplicate before the server" refused 2 "already has a rule"

# create --sync: created and pushed at once; creds print the token.
run --db "$A" creds create --description "db agent" --sync
check "creds create --sync: exit 0" status_is 0
check "creds create --sync prints the token" out_has "^token: "
db_cred=$(sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out")
run --db "$A" creds get "$db_cred"
check "creds create --sync: OWNER at once, from the create's reply" \
    out_has "^owner  *usr_[0-9A-Za-z]"
run --db "$A" creds list
check "... and in creds list" sh -c 'grep "db agent" "$0" | grep -q " usr_[0-9A-Za-z]"' "$tmp/out"
run --db "$A" rules create --cidr 192.168.0.0/16 --policy $P1 --action allow --sync
check "rules create --sync: on the server" [ "$(server_count ip_policy_rules)" -eq 1 ]

# Bad key: the sync stops and says so; nothing is marked deleted.
RAMPART_API_KEY=wrong run --db "$A" sync
check "bad API key: exit 2 with a reason" refused 2 "API key"
check "bad API key: the typed failure, with its status and operation" \
    err_has "failure: auth (HTTP 401, .*operation op_.*, listing rules)"
RAMPART_API_KEY=wrong run --db "$A" sync --json
check "bad API key, --json: the failure as an object" \
    out_has '"failure": {"kind": "auth", "http_status": 401, '
check "bad API key, --json: the listing it concerns" \
    out_has '"object_kind": "rule", "object_id": ""}'
run --db "$A" plan
check "after the auth failure nothing was marked deleted" out_lacks "^~ rule [^ ]* .*192.168"

# No remote configured: a clear message.
env -u RAMPART_API_URL "$RAMPART" --db "$A" sync >"$tmp/out" 2>"$tmp/err"
status=$?
check "no remote configured: says how" refused 2 "RAMPART_API_URL"

# --sync with no remote: the change is saved and queued, the message says so and how
# to configure a remote, and exit 5 (not 2: something was changed).
C="$tmp/c.db"
env -u RAMPART_API_URL -u RAMPART_API_KEY "$RAMPART" --db "$C" rules create \
    --cidr 172.16.0.0/12 --policy $P1 --action allow --sync >"$tmp/out" 2>"$tmp/err"
status=$?
check "rules create --sync, no remote: exit 5" status_is 5
check "... says the change is saved and queued" err_has "saved and queued, not sent"
check "... and how to configure a remote" err_has "RAMPART_API_URL and RAMPART_API_KEY"
check "... and which file holds the settings" err_has "$XDG_CONFIG_HOME/rampart/config"
check "... never 'nothing changed'" err_lacks "nothing"
check "... the row is shown as queued" out_has "new"
run --db "$C" rules list --json
check "... the rule is in the cache, queued" out_has '"cidr":"172.16.0.0/12".*"state":"new"'
env -u RAMPART_API_URL -u RAMPART_API_KEY "$RAMPART" --db "$C" creds create \
    --description x --sync >"$tmp/out" 2>"$tmp/err"
status=$?
check "creds create --sync, no remote: exit 5 with the message" refused 5 "saved and queued"
check "... no token line" out_lacks "^token: "
local_id=$(env -u RAMPART_API_URL "$RAMPART" --db "$C" rules list --json |
    grep -o '"id":"local_[^"]*"' | head -n 1 | cut -d'"' -f4)
env -u RAMPART_API_URL "$RAMPART" --db "$C" rules update "$local_id" --description later \
    --sync >"$tmp/out" 2>"$tmp/err"
status=$?
check "rules update --sync, no remote: exit 5" refused 5 "saved and queued"
run --db "$C" rules get "$local_id" --json
check "... the edit is kept" out_has '"description": "later"'
run --db "$C" sync
check "the queue goes out once a remote is configured" status_is 0
check "... both rows created" out_has "2 created"

# Two syncs of one cache: the second waits for the first (the console and a cron
# job may both sync), then finds the queue sent; nothing goes out twice.
if command -v flock >/dev/null 2>&1; then
    D="$tmp/d.db"
    start_server lockwait --faults 'create_rule:delay=1500@1' || exit 1
    run --db "$D" rules create --cidr 10.9.0.0/16 --policy $P1 --action allow
    "$RAMPART" --db "$D" sync >"$tmp/first.out" 2>&1 &
    first=$!
    i=0 # the first holds the cache's sync lock once flock cannot take it
    while flock -n "$D-sync.lock" true 2>/dev/null && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    run --db "$D" sync
    wait $first
    first_status=$?
    check "a sync while another syncs the cache waits for it, then converges" status_is 0
    check "... and says it waits" err_has "another sync of this cache is running"
    check "... the first converged too" [ "$first_status" -eq 0 ]
    check "... the rule went out once" [ "$(server_list ip_policy_rules cidr | grep -c '^10.9.0.0/16$')" -eq 1 ]
    stop_server
else
    skip "two syncs of one cache" "flock(1) is not installed"
fi
checks_done
