#!/bin/sh
# `rampart apply`: lists in (text, JSON, --key), every bad line named, minimal
# changes, ownership by NAME, conflicts, --aggregate; then against serve-api: a
# one-line change of the list is exactly one request, a second apply none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
DB="$tmp/c.db"

cat >"$tmp/office.txt" <<'EOF'
# the office's networks
10.0.0.0/8        # headquarters
10.1.0.0/16       # lab, inside headquarters
192.168.1.5
2001:DB8::/32     # v6
EOF

run --db "$DB" apply --policy $P --action allow --name office "$tmp/office.txt"
check "apply: exit 0" status_is 0
check "apply: four creates planned" out_has "4 to create, 0 to delete"
check "apply: a bare address is a /32" out_has "192.168.1.5/32"
check "apply: the overlap is named with its lines" \
    err_has "office.txt:3: 10.1.0.0/16 lies inside 10.0.0.0/8 (line 2): kept"
check "apply: the requests and the time the budget needs" \
    out_has "Requests: 4 (4 POST, 0 DELETE, 0 PATCH, 0 GET): about .* at the budget's pace"
run --db "$DB" rules list --policy $P
check "apply: the comment is the description" out_has "10.0.0.0/8  *headquarters"
check "apply: no comment: the NAME" out_has "192.168.1.5/32  *office"
run --db "$DB" rules get "$(awk '/10.0.0.0\/8/ { print $1 }' "$tmp/out")" --json
check "apply: the rule carries its NAME in metadata" \
    out_has '"metadata": "{\\"rampart_apply\\":\\"office\\"}"'

run --db "$DB" apply --policy $P --action allow --name office "$tmp/office.txt"
check "apply twice: nothing more queued, the first run's still waiting" out_has "0 to create, 0 to delete.*4 unchanged"
check "... and said to be queued, not 'Nothing to do'" out_has "4 changes of this apply are still queued"
check "apply twice: 0 requests" out_has "Requests: 0 "

# Every bad line, with its number; nothing queued.
printf '10.0.0.0/8\n10.0.0.1/8\nnot-an-ip\n1.2.3.4 5.6.7.8\n::1/129\n' >"$tmp/bad.txt"
run --db "$DB" apply --policy $P --action allow --name office "$tmp/bad.txt"
check "bad list: exit 2" status_is 2
check "bad list: host bits, with the fix and the line" \
    err_has "bad.txt:2: '10.0.0.1/8': host bits set: did you mean 10.0.0.0/8?"
check "bad list: line 3 named" err_has "bad.txt:3: 'not-an-ip'"
check "bad list: line 4 named" err_has "bad.txt:4: one entry per line"
check "bad list: line 5 named" err_has "bad.txt:5: .*0..128"
check "bad list: nothing queued" err_has "4 bad entries: nothing queued"
run --db "$DB" rules list --policy $P
check "bad list: the cache is as it was" out_lines 5

# JSON: an array, an object with --key, a path through an array of objects.
printf '[\n  "198.51.100.0/24",\n  "198.51.101.0/24"\n]\n' >"$tmp/list.json"
run --db "$DB" apply --policy $P --action deny --name blocks --dry-run "$tmp/list.json"
check "JSON array: planned" out_has "2 to create"
check "--dry-run: says nothing was queued" out_lacks "Queued"
cat >"$tmp/ranges.json" <<'EOF'
{
  "hooks": ["192.0.2.0/25", "192.0.2.128/25", "2001:db8:ff::/48"],
  "prefixes": [
    {"ip_prefix": "198.18.0.0/16", "region": "a"},
    {"ip_prefix": 42}
  ]
}
EOF
run --db "$DB" apply --policy $P --action deny --name hooks "$tmp/ranges.json"
check "JSON object without --key: refused, naming its arrays" \
    refused 2 "name the array of CIDRs with --key (its members holding arrays: hooks, prefixes)"
run --db "$DB" apply --policy $P --action deny --name hooks --key hook "$tmp/ranges.json"
check "--key that names nothing: refused" refused 2 "'hook': no such member"
run --db "$DB" apply --policy $P --action deny --name hooks --key prefixes.ip_prefix \
    "$tmp/ranges.json"
check "--key path: a wrong type is named with its line" refused 2 "ranges.json:5: expected a CIDR string, got a number"
run --db "$DB" apply --policy $P --action deny --name hooks --key hooks --aggregate --json \
    "$tmp/ranges.json"
check "--aggregate: two halves become one /24" out_has '"op": "create", "requests": 1, "cidr": "192.0.2.0/24"'
check "--aggregate --json: one fewer" out_has '"read": 3, "entries": 2, "merged_away": 1'
check "--json: queued" out_has '"queued": true}'
printf '203.0.113.7\n' | "$RAMPART" --db "$DB" apply --policy $P --action deny --name one - \
    >"$tmp/out" 2>"$tmp/err"
status=$?
check "stdin (-): read" status_is 0

# Ownership: another NAME's and the other action's rules are not touched; an entry
# they hold is a conflict, and nothing is queued.
printf '10.0.0.0/8\n172.16.0.0/12\n' >"$tmp/partners.txt"
run --db "$DB" apply --policy $P --action allow --name partners "$tmp/partners.txt"
check "conflict: exit 2" status_is 2
check "conflict: names the rule that holds it and its NAME" \
    out_has "^! conflict 10.0.0.0/8 .*held by local_.* (allow, apply 'office')"
check "conflict: nothing queued" err_has "1 list entry is held by rules this apply does not own: nothing queued"
run --db "$DB" apply --policy $P --action allow --name partners --skip-conflicts \
    "$tmp/partners.txt"
check "--skip-conflicts: the rest is queued" out_has "1 to create, 0 to delete"
run --db "$DB" apply --policy $P --action allow --name office "$tmp/office.txt"
check "the office's rules are untouched by the partners' apply" out_has "0 to create, 0 to delete, 0 to edit, 0 to adopt, 0 to retry, 4 unchanged"

run --db "$DB" apply --policy nope --action allow "$tmp/office.txt"
check "bad policy id: usage error" refused 2 "ipp_"
run --db "$DB" apply --policy $P --action maybe "$tmp/office.txt"
check "bad action: usage error" refused 2 "allow"
run --db "$DB" apply --policy $P --action allow --name 'a b' "$tmp/office.txt"
check "bad NAME: usage error" refused 2 "letters, digits"
run apply --help
check "apply --help: ownership explained" out_has "rampart_apply"

# Input is read as it comes: an endless line (/dev/zero) is refused at once, and a
# list piped in (curl ... | rampart apply -) is read line by line.
timeout -s KILL 20 "$RAMPART" --db "$DB" apply --policy $P --action allow --dry-run /dev/zero \
    >"$tmp/out" 2>"$tmp/err"
status=$?
check "apply /dev/zero: refused at once (no 9.7 GB read first), naming the line" \
    sh -c '[ "$0" -eq 2 ] && grep -q "line 1 is longer than 4096 bytes" "$1"' "$status" "$tmp/err"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "10.%d.%d.0/24\n", int(i / 256), i % 256 }' |
    "$RAMPART" --db "$DB" apply --policy $P --action allow --name piped --dry-run - \
    >"$tmp/out" 2>"$tmp/err"
status=$?
check "a list of 3,000 lines piped in: planned" \
    sh -c '[ "$0" -eq 0 ] && grep -q "3000 to create" "$1"' "$status" "$tmp/out"

# Against the reference server: one changed line is exactly one request.
start_server main || exit 1
S="$tmp/s.db"
run --db "$S" apply --policy $P --action allow --name office --sync "$tmp/office.txt"
check "apply --sync: pushed" [ "$(server_count ip_policy_rules)" -eq 4 ]
sed 's#^192.168.1.5$#192.168.1.6#' "$tmp/office.txt" >"$tmp/office2.txt"
run --db "$S" apply --policy $P --action allow --name office "$tmp/office2.txt"
check "one line changed: an edit in place, its look and its PATCH" \
    out_has "Requests: 2 (0 POST, 0 DELETE, 1 PATCH, 1 GET)"
log="$tmp/main.server.log"
from=$(wc -l <"$log")
run --db "$S" sync
# The server logs a request after replying: poll for the PATCH's line.
patch_logged() { tail -n +"$((from + 1))" "$log" | grep -q '^PATCH '; }
i=0
until patch_logged || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
sent=$(tail -n +"$((from + 1))" "$log" | grep -c -E '^(POST|DELETE|PATCH) ')
check "the sync sent exactly one change" [ "$sent" -eq 1 ]
check "... a PATCH" sh -c "tail -n +$((from + 1)) '$log' | grep -q '^PATCH /ip_policy_rules/'"
check "the server has the new address" sh -c "'$RAMPART' --db '$S' rules list | grep -q 'synced .*192.168.1.6/32'"
run --db "$S" apply --policy $P --action allow --name office "$tmp/office2.txt"
check "a second apply queues nothing" out_has "Nothing to do"
run --db "$S" plan
check "plan: nothing to do" out_has "Nothing to do"

# A reused rule takes the new entry's comment in the same PATCH.
sed 's#^192.168.1.6$#198.51.100.77 ; jump host#' "$tmp/office2.txt" >"$tmp/office3.txt"
run --db "$S" apply --policy $P --action allow --name office --dry-run --json "$tmp/office3.txt"
check "a reused rule, --json: its description from and to" \
    out_has '"op": "edit", .*"description": {"from": "office", "to": "jump host"}'
run --db "$S" apply --policy $P --action allow --name office "$tmp/office3.txt"
check "a reused rule: the plan shows its new description" \
    out_has "^~ edit  *192.168.1.6/32 -> 198.51.100.77/32  *ipr_[0-9A-Za-z]* line 4  description: office -> jump host$"
check "... still one PATCH and its look" out_has "Requests: 2 (0 POST, 0 DELETE, 1 PATCH, 1 GET)"
from=$(wc -l <"$log")
run --db "$S" sync
# writes_logged: the POST, DELETE and PATCH lines the server logged since $from
# (it logs a request after replying: polled, at most 5 s).
writes_logged() {
    n=0
    while [ $n -lt 50 ] && ! tail -n +"$((from + 1))" "$log" | grep -q '^PATCH '; do
        sleep 0.1
        n=$((n + 1))
    done
    tail -n +"$((from + 1))" "$log" | grep -c -E '^(POST|DELETE|PATCH) '
}
check "the cidr and the description went in one PATCH" [ "$(writes_logged)" -eq 1 ]
check "the server has the rule's new description" \
    [ "$(server_list ip_policy_rules description | grep -c '^jump host$')" -eq 1 ]

# An empty list (a download that failed) deletes nothing unless asked.
: >"$tmp/empty.txt"
run --db "$S" apply --policy $P --action allow --name office "$tmp/empty.txt"
check "an empty list: refused, nothing queued" refused 2 "no entries: applied, it would delete every rule 'office' owns"
run --db "$S" apply --policy $P --action allow --name office --allow-empty --dry-run "$tmp/empty.txt"
check "--allow-empty: every rule of the NAME planned for deletion" out_has "0 to create, 4 to delete"
checks_done
