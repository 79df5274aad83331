#!/bin/sh
# `rampart check POLICY IP…` over a real database: decisions (deny wins, IPv6,
# IPv4-mapped), exit statuses, --json, bad input, and which rules are in force
# as rows move through sync states (against a real serve-api).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"
trap 'stop_server; rm -rf "$tmp"' EXIT INT TERM

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
Q=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b
R_SYNCED=ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01

# One rule already on the remote (synced), the rest queued creates (pending).
cat >"$tmp/synced.json" <<JSON
{"ip_policy_rules": [
 {"id": "$R_SYNCED", "uri": "https://api.example.com/ip_policy_rules/$R_SYNCED",
  "created_at": "2025-09-04T10:11:15Z", "cidr": "10.0.0.0/8",
  "ip_policy": {"id": "$P"}, "action": "allow"}
], "next_page_uri": null}
JSON
cat >"$tmp/queued.json" <<JSON
[
 {"cidr": "10.1.2.3/32", "ip_policy_id": "$P", "action": "deny", "description": "deny /32 in allow /8"},
 {"cidr": "10.1.0.0/16", "ip_policy_id": "$P", "action": "allow"},
 {"cidr": "192.168.0.0/16", "ip_policy_id": "$P", "action": "deny"},
 {"cidr": "192.168.1.7/32", "ip_policy_id": "$P", "action": "allow", "description": "allow /32 in deny /16"},
 {"cidr": "2001:db8::/32", "ip_policy_id": "$P", "action": "allow"},
 {"cidr": "2001:db8:dead::/48", "ip_policy_id": "$P", "action": "deny"},
 {"cidr": "0.0.0.0/0", "ip_policy_id": "$Q", "action": "allow"},
 {"cidr": "203.0.113.9/32", "ip_policy_id": "$Q", "action": "deny"}
]
JSON
run rules import "$tmp/synced.json"
check "setup: synced rule imported" status_is 0
run rules import "$tmp/queued.json"
check "setup: queued rules imported" out_has "imported 8 rules"

# ---- decisions and exit statuses ----
run check $P 10.9.9.9
check "inside an allow: exit 0" status_is 0
check "inside an allow: allowed by the /8, synced" \
    out_has "^10\.9\.9\.9  *allowed  *allow  *10\.0\.0\.0/8  *$R_SYNCED  *synced$"
check "human output: a header" out_has "^IP  *DECISION  *ACTION  *CIDR  *RULE  *SYNC$"

run check $P 10.1.2.3
check "deny /32 inside allow /8: exit 1" status_is 1
check "deny /32 inside allow /8: denied by the /32, pending" \
    out_has "^10\.1\.2\.3  *denied  *deny  *10\.1\.2\.3/32  *local_[0-9A-Za-z]*  *pending$"

run check $P 10.1.9.9
check "most specific allow decides" out_has "allowed  *allow  *10\.1\.0\.0/16"

run check $P 192.168.1.7
check "allow /32 inside deny /16: denied" status_is 1
check "allow /32 inside deny /16: the deny /16 decides" out_has "denied  *deny  *192\.168\.0\.0/16"

run check $P 11.0.0.1
check "no rule matches: exit 1" status_is 1
check "no rule matches: dashes" out_has "^11\.0\.0\.1  *denied  *-  *-  *-  *-$"

run check $P 2001:db8::1 2001:DB8:DEAD::1 2001:db9::1
check "IPv6: exit 1 (some denied)" status_is 1
check "IPv6 allow" out_has "^2001:db8::1  *allowed  *allow  *2001:db8::/32"
check "IPv6 deny /48 in allow /32" out_has "^2001:DB8:DEAD::1  *denied  *deny  *2001:db8:dead::/48"
check "IPv6 outside every rule" out_has "^2001:db9::1  *denied  *-"
check "one line per address, in order" out_lines 4

run check $P ::ffff:10.9.9.9 ::ffff:10.1.2.3
check "IPv4-mapped IPv6 is checked as IPv4" out_has "^::ffff:10\.9\.9\.9  *allowed  *allow  *10\.0\.0\.0/8"
check "IPv4-mapped IPv6: the IPv4 deny applies" out_has "^::ffff:10\.1\.2\.3  *denied  *deny  *10\.1\.2\.3/32"

run check $P 10.9.9.9 10.200.0.1 2001:db8:1::1
check "several addresses all allowed: exit 0" status_is 0

run check $Q 1.2.3.4 255.255.255.255 203.0.113.9
check "/0 allow with a host deny: exit 1" status_is 1
check "/0 allow covers everything" out_has "^255\.255\.255\.255  *allowed  *allow  *0\.0\.0\.0/0"
check "host deny under /0" out_has "^203\.0\.113\.9  *denied  *deny  *203\.0\.113\.9/32"
run check $Q ::1
check "an IPv4 /0 does not cover IPv6" status_is 1
check "an IPv4 /0 does not cover IPv6: no rule" out_has "^::1  *denied  *-"

run check ipp_2VhYfCwqPkX0n4sF5nYfW3eJzzz 10.9.9.9
check "unknown policy: exit 3" refused 3 "has no rules in force"
check "unknown policy: denied" out_has "denied"

# ---- --json: the agent route's keys ----
run check $P 10.9.9.9 11.0.0.1 --json
check "--json: exit follows the decisions" status_is 1
check "--json: an array" out_has '^\['
check "--json: allowed object" out_has "{\"ip\": \"10.9.9.9\", \"policy\": \"$P\", \"allowed\": true, \"policy_known\": true, \"action\": \"allow\", \"cidr\": \"10.0.0.0/8\", \"synced\": true, \"rule_id\": \"$R_SYNCED\"}"
check "--json: no rule gives nulls" out_has "{\"ip\": \"11.0.0.1\", \"policy\": \"$P\", \"allowed\": false, \"policy_known\": true, \"action\": null, \"cidr\": null, \"synced\": null, \"rule_id\": null}"
if command -v python3 >/dev/null 2>&1; then
    check "--json: valid JSON with 2 decisions" \
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d) == 2' "$tmp/out"
fi
run check ipp_2VhYfCwqPkX0n4sF5nYfW3eJzzz 10.9.9.9 --json
check "--json unknown policy: exit 3" status_is 3
check "--json unknown policy: policy_known false" out_has '"policy_known": false'

# ---- bad input: exit 2, nothing decided, the input never echoed ----
for bad in 010.1.2.3 10.1.2.3/32 fe80::1%eth0 10.1.2 10.1.2.256 "10.1.2.3 " " 10.1.2.3" \
    hello 2001:db8:::1 ""; do
    run check $P 10.9.9.9 "$bad"
    check "bad address '$bad': exit 2" status_is 2
    check "bad address '$bad': nothing on stdout" [ ! -s "$tmp/out" ]
    check "bad address '$bad': names its position" err_has "address #2: "
done
run check $P 010.1.2.3
check "leading zero: says why" err_has "leading zero"
run check $P 10.1.2.3/32
check "a range: says why" err_has "not a range"
run check $P fe80::1%eth0
check "a zone: says why, without echoing it" refused 2 "zone id"
check "a zone: the input is not echoed" err_lacks "eth0"
run check $P "$(printf '10.1.2.3\033[2J')"
check "control bytes: refused, not echoed" refused 2 "control"
check "control bytes: no escape reaches the terminal" \
    sh -c '! grep -q "$(printf "\033")" "$1"' sh "$tmp/err"
run check pol_123 10.9.9.9
check "bad policy id: exit 2" refused 2 "ipp_"
run check $P
check "no address: usage error" refused 2 "missing argument"
run check $P 10.9.9.9 --frobnicate
check "unknown option: usage error" refused 2 "unknown option"
run check --help
check "--help: exit 0 and the exit statuses" out_has "Exit status: 0 every address is allowed"

# ---- which rules are in force, through sync states ----
start_server main || exit 1
run sync
check "sync: converged" status_is 0
run check $P 10.1.2.3
check "after sync: the deny is synced" out_has "denied  *deny  *10\.1\.2\.3/32  *ipr_[0-9A-Za-z]*  *synced$"
deny_id=$(awk '/^10\.1\.2\.3 / { print $5 }' "$tmp/out")
run rules delete "$deny_id"
check "delete the synced deny: marked for deletion" status_is 0
run check $P 10.1.2.3
check "a rule being deleted is not in force: allowed by the /16" \
    out_has "^10\.1\.2\.3  *allowed  *allow  *10\.1\.0\.0/16"
check "... exit 0" status_is 0
run sync
run check $P 10.1.2.3
check "after the delete synced: still allowed" status_is 0

# A rule deleted on the remote is kept for review (remote_deleted), not in force.
run rules list --policy $P
synced_id=$(awk '$5 == "192.168.0.0/16" { print $1 }' "$tmp/out")
check "the synced deny /16 has a remote id" [ "${synced_id#ipr_}" != "$synced_id" ]
curl -sS -o /dev/null -X DELETE -H "Authorization: Bearer $SERVER_KEY" \
    -H "Service-Version: 2" "$server_url/ip_policy_rules/$synced_id"
run sync --pull-only
run rules get "$synced_id"
check "remote delete pulled: remote_deleted" out_has "remote_deleted"
run check $P 192.168.2.1 192.168.1.7
check "a remotely deleted deny is not in force" out_has "^192\.168\.1\.7  *allowed  *allow  *192\.168\.1\.7/32"
check "... nothing else covers 192.168.2.1" out_has "^192\.168\.2\.1  *denied  *-"
stop_server

# ---- a cached rule that cannot be read: no decision, status 1 ----
other="$tmp/broken.db"
run --db "$other" rules create --cidr 10.0.0.0/8 --policy $P --action deny
run --db "$other" rules create --cidr 10.0.0.0/8 --policy $Q --action allow
run --db "$other" rules create --cidr 2001:db8::/32 --policy $Q --action allow
sqlite3 "$other" "UPDATE rules SET cidr = '10.0.0.1/8' WHERE policy_id = '$P'"
run --db "$other" check $P 10.9.9.9
check "an unreadable cached rule: exit 1, no decision" refused 1 "host bits"
check "an unreadable cached rule: nothing on stdout" [ ! -s "$tmp/out" ]
run --db "$other" check $Q 10.9.9.9
check "another policy still decides" status_is 0
# As an older version cached it (its address-order key is the same for both).
sqlite3 "$other" "UPDATE rules SET cidr = '2001:DB8::/32' WHERE cidr = '2001:db8::/32'"
run --db "$other" check $Q 2001:db8::1
check "a cached cidr in another valid form is understood" out_has "allowed  *allow  *2001:db8::/32"

# ---- IPv4-mapped prefixes: refused at a person's doors, decided as IPv4 when pulled ----
mapped="$tmp/mapped.db"
run --db "$mapped" rules create --cidr ::ffff:192.0.2.1/128 --policy $P --action deny
check "create of an IPv4-mapped cidr: refused with the IPv4 form" \
    refused 2 "IPv4-mapped .*write 192.0.2.1/32"
printf '::ffff:198.51.100.0/120\n' >"$tmp/mapped.txt"
run --db "$mapped" apply --policy $P --action deny --name m "$tmp/mapped.txt"
check "apply of an IPv4-mapped entry: refused, naming the line and the IPv4 form" \
    sh -c '[ "$0" -eq 2 ] && grep -q "mapped.txt:1: .*write 198.51.100.0/24" "$1"' "$status" "$tmp/err"
cat >"$tmp/mapped.json" <<JSON
[{"id": "ipr_2VhYfCwqPkX0n4sF5nYfW3eJm01", "cidr": "::ffff:192.0.2.0/120",
  "ip_policy": {"id": "$P"}, "action": "deny", "created_at": "2025-09-04T10:11:15Z"},
 {"id": "ipr_2VhYfCwqPkX0n4sF5nYfW3eJm02", "cidr": "192.0.0.0/8",
  "ip_policy": {"id": "$P"}, "action": "allow", "created_at": "2025-09-04T10:11:15Z"}]
JSON
run --db "$mapped" rules import "$tmp/mapped.json"
check "a remote rule of that form (synced): kept" status_is 0
run --db "$mapped" check $P 192.0.2.7
check "... and check decides it as the IPv4 rule it means" \
    out_has "^192\.0\.2\.7  *denied  *deny  *::ffff:192\.0\.2\.0/120"
run --db "$mapped" export --policy $P --format nftables --all-ports
check "... and the nftables export puts it in the IPv4 deny set" \
    sh -c 'awk "/set deny_v4/,/}/" "$0" | grep -q "192.0.2.0/24"' "$tmp/out"
checks_done
