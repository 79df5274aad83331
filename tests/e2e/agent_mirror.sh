#!/bin/sh
# `rampart agent`: the read-only mirror of the remote API (shapes, pagination over
# 1,000 rules with limit 7 by a client following next_page_uri, errors; rampart's
# own sync client reading the cache through it) and policy decisions (tables with
# IPv4, IPv6, overlapping allow and deny; the index follows the cache).
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
trap 'stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM
export LC_ALL=C

DB="$tmp/cache.db"
export RAMPART_DB="$DB"
P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
N=1000
rid() { printf 'ipr_%027d' "$1"; } # the ids of the remote rules below

# ---- the remote: 1,000 rules written into serve-api's database, a few creds ----
awk -v n="$N" -v p="$P" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.0/24\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"%s\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, int(i / 256), i % 256, p, (i % 3 ? "allow" : "deny");
    print "]" }' >"$tmp/remote.json"
"$RAMPART" --db "$tmp/agent.server.db" rules import "$tmp/remote.json" >/dev/null
start_server agent || exit 1
run creds create --description one --acl 'bind:a.example.com' --sync
C1=$(sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out")
T1=$(sed -n 's/^token: //p' "$tmp/out")
run creds create --description two --sync
run sync --pull-only
check "setup: 1,000 rules pulled into the cache" sh -c '"$0" rules list | grep -c " synced " | grep -qx 1000' "$RAMPART"
stop_server
run rules create --cidr 192.0.2.0/24 --policy "$P" --action allow # queued: not remote
LOCAL=$(sed -n 's/.*\(local_[0-9A-Za-z]*\).*/\1/p' "$tmp/out" | head -n 1)
run rules delete $(rid 5) # deleting: still remote
run creds create --description three # queued

KEY="$tmp/agent.key"
start_listening_agent m --listen "unix:$tmp/m.sock" --listen tcp:127.0.0.1:0 --key-file "$KEY" \
    --rate 0
key_config "$KEY"

# ---- paging: a client that follows next_page_uri ----
# page_all KIND FIRST-URL FETCH: every id, in order, one a line, into $tmp/ids;
# pages counted in $pages. FETCH is ureq or treq.
page_all() {
    : >"$tmp/ids"
    pages=0
    next=$2
    while [ -n "$next" ] && [ $pages -lt 1000 ]; do
        case $3 in
        ureq) ureq "$S" "$next" ;;
        treq) treq "$T" "${next#http://$T}" ;;
        esac
        [ "$status" = 200 ] || break
        sed 's/"uri":"[^"]*"//g' "$tmp/out" | grep -o "\"id\":\"$1_[^\"]*\"" | sed 's/.*:"//; s/"$//' >>"$tmp/ids"
        next=$(sed -n 's/.*"next_page_uri":"\([^"]*\)".*/\1/p' "$tmp/out")
        pages=$((pages + 1))
    done
}
descending() { sort -r "$1" | cmp -s - "$1"; }

page_all ipr "/ip_policy_rules?limit=7" ureq
check "unix: 1,000 rules in 143 pages of 7" sh -c '[ "$0" = 143 ] && [ "$(wc -l <"$1")" = 1000 ]' "$pages" "$tmp/ids"
check "unix: newest first, no duplicates" sh -c 'sort -u "$0" | wc -l | grep -qx 1000' "$tmp/ids"
check "unix: in descending id order" descending "$tmp/ids"
check "unix: the queued rule is not in the mirror" sh -c '! grep -q local_ "$0"' "$tmp/ids"
check "unix: the rule being deleted still is" grep -qx $(rid 5) "$tmp/ids"
cp "$tmp/ids" "$tmp/unix.ids"
ureq "$S" "/ip_policy_rules?limit=7"
check "unix: next_page_uri is path-only" out_has '"next_page_uri":"/ip_policy_rules?before_id=ipr_[0-9]*&limit=7"'
check "unix: list uri path-only" out_has '"uri":"/ip_policy_rules","next_page_uri"'
check "unix: item uris point at the agent" out_has "\"uri\":\"/ip_policy_rules/$(rid 999)\""

page_all ipr "http://$T/ip_policy_rules?limit=7" treq
check "tcp: the same 1,000 ids over 143 pages" sh -c '[ "$0" = 143 ] && cmp -s "$1" "$2"' "$pages" "$tmp/ids" "$tmp/unix.ids"
treq "$T" "/ip_policy_rules?limit=7"
check "tcp: next_page_uri absolute at the agent" out_has "\"next_page_uri\":\"http://$T/ip_policy_rules?before_id=$(rid 993)&limit=7\""
check "tcp: ip_policy ref at the agent" out_has "\"ip_policy\":{\"id\":\"$P\",\"uri\":\"http://$T/ip_policies/$P\"}"
check "tcp: items in the API's field order" out_has "^{\"ip_policy_rules\":\\[{\"id\":\"$(rid 999)\",\"uri\":\"[^\"]*\",\"created_at\":\"2026-01-01T00:00:00Z\",\"cidr\":\"10.3.231.0/24\",\"ip_policy\":{[^}]*},\"action\":\"deny\"},"
treq "$T" "/ip_policy_rules?limit=100&before_id=$(rid 3)"
check "before_id near the start: the 3 older rules, last page" sh -c '[ "$0" = 200 ] && grep -q "\"next_page_uri\":null}$" "$1" && [ "$(grep -o "\"id\":\"ipr_" "$1" | wc -l)" = 3 ]' "$status" "$tmp/out"
treq "$T" /ip_policy_rules
check "default limit: 100 items" sh -c '[ "$(grep -o "\"id\":\"ipr_" "$0" | wc -l)" = 100 ]' "$tmp/out"

page_all cr "/credentials?limit=1" ureq
check "credentials: the two synced ones, newest first" sh -c '[ "$(wc -l <"$0")" = 2 ] && tail -n 1 "$0" | grep -qx "$1"' "$tmp/ids" "$C1"
ureq "$S" /credentials
check "credentials: tokens null, ACL kept" sh -c 'grep -q "\"token\":null,\"acl\":\[\"bind:a.example.com\"\]" "$0" && ! grep -qF "$1" "$0"' "$tmp/out" "$T1"
ureq "$S" "/credentials/$C1"
check "one credential: 200, token null" sh -c '[ "$0" = 200 ] && grep -q "^{\"id\":\"$1\",\"uri\":\"/credentials/$1\"" "$2" && grep -q "\"token\":null" "$2"' "$status" "$C1" "$tmp/out"
ureq "$S" /ip_policy_rules/$(rid 42)
check "one rule: 200" replied 200 '"cidr":"10.0.42.0/24"'

# ---- errors, as the remote answers them ----
ureq "$S" /ip_policy_rules/ipr_0000000000000000000000zzzzz
check "unknown rule: 404 ERR_NOT_FOUND" error_is ERR_NOT_FOUND 404
ureq "$S" "/ip_policy_rules/$LOCAL"
check "a local id: 404 (the remote does not know it)" error_is ERR_NOT_FOUND 404
ureq "$S" /credentials/$(rid 42)
check "an id of another kind: 404" is 404
for q in limit=0 limit=101 limit=abc limit=7\&limit=7 before_id=cr_1 foo=1 before_id=x; do
    ureq "$S" "/ip_policy_rules?$q"
    check "?$q: 400 ERR_INVALID_QUERY" error_is ERR_INVALID_QUERY 400
done
ureq "$S" /ip_policy_rules -H 'Service-Version: 3'
check "version 3: 400 ERR_VERSION" error_is ERR_VERSION 400
ureq "$S" /ip_policy_rules?limit=1 -H 'Service-Version: 2'
check "version 2: 200" is 200
ureq "$S" /ip_policy_rules -X POST -H 'Content-Type: application/json' --data '{"cidr":"10.0.0.0/8"}'
check "POST: 405 ERR_METHOD_NOT_ALLOWED, Allow: GET" sh -c '[ "$0" = 405 ] && tr -d "\r" <"$1" | grep -q "^Allow: GET$"' "$status" "$tmp/hdr"
check "POST: error shape" error_is ERR_METHOD_NOT_ALLOWED 405
ureq "$S" /credentials/"$C1" -X DELETE
check "DELETE: 405" is 405
ureq "$S" /ip_policy_rules/$(rid 42) -X PATCH --data '{}'
check "PATCH: 405" is 405
run rules get $(rid 42)
check "nothing was written: the rule is still synced" out_has 'synced'

# ---- rampart's own sync client, reading the cache through the mirror ----
export RAMPART_API_URL="http://$T" RAMPART_API_KEY="$(head -n 1 "$KEY")"
run --db "$tmp/copy.db" sync --pull-only
check "a remote-API client pulls through the mirror: exit 0" status_is 0
run --db "$tmp/copy.db" status --json
check "  1,000 rules and 2 credentials arrive" sh -c 'grep -q "\"rules\": {[^}]*\"synced\": 1000" "$0" && grep -q "\"credentials\": {[^}]*\"synced\": 2" "$0"' "$tmp/out"
unset RAMPART_API_URL RAMPART_API_KEY

# ---- policy decisions ----
Q=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b
for r in "10.0.0.0/8 allow" "10.1.0.0/16 deny" "10.1.2.0/24 allow" "192.168.1.1/32 allow" \
    "2001:db8::/32 allow" "2001:db8:bad::/48 deny" "2001:db8:bad:1::/64 allow" \
    "0.0.0.0/0 deny" "172.16.0.0/12 allow"; do
    set -- $r
    run rules create --cidr "$1" --policy "$Q" --action "$2"
done
# decided ALLOWED CIDR: the last reply is that decision.
decided() {
    [ "$status" = 200 ] && grep -q "\"allowed\":$1" "$tmp/out" &&
        { [ -z "$2" ] && grep -q '"rule_id":null' "$tmp/out" ||
            grep -q "\"cidr\":\"$2\"" "$tmp/out"; }
}
# until_reply TEST ARGS... PATH: ask PATH until TEST ARGS holds (the agent swaps a
# new index in off the request threads once the rules changed): at most 4 s.
until_reply() {
    n=0
    while :; do
        eval "ureq \"\$S\" \"\${$#}\""
        "$@" 2>/dev/null && return 0
        n=$((n + 1))
        [ $n -lt 200 ] || return 1
        sleep 0.02 # polling for the swap, not waiting for a guess
    done
}
# decide IP EXPECTED-ALLOWED EXPECTED-CIDR: one row of the table.
decide() {
    until_reply decided "$2" "$3" "/v1/ip_policies/$Q/check?ip=$1"
    check "check $1: allowed=$2 by ${3:-no rule}" decided "$2" "$3"
}
# 0.0.0.0/0 deny covers every IPv4 address: deny wins whatever the prefix.
decide 10.2.3.4 false 0.0.0.0/0
run rules delete "$(sh -c '"$0" rules list --policy "$1"' "$RAMPART" "$Q" | grep ' 0.0.0.0/0 ' | awk '{print $1}')"
decide 10.2.3.4 true 10.0.0.0/8
decide 10.1.2.3 false 10.1.0.0/16
decide 10.1.9.9 false 10.1.0.0/16
decide 10.255.255.255 true 10.0.0.0/8
decide 11.0.0.1 false ""
decide 192.168.1.1 true 192.168.1.1/32
decide 192.168.1.2 false ""
decide 172.31.255.255 true 172.16.0.0/12
decide 172.32.0.0 false ""
decide 2001:db8::1 true 2001:db8::/32
decide 2001:db8:bad::1 false 2001:db8:bad::/48
decide 2001:db8:bad:1::1 false 2001:db8:bad::/48
decide 2001:DB8:FFFF::1 true 2001:db8::/32
decide 2001:db9::1 false ""
decide ::ffff:10.2.3.4 true 10.0.0.0/8
decide ::1 false ""
ureq "$S" "/v1/ip_policies/$Q/check?ip=10.2.3.4"
check "decision: policy, rule id, action, synced" sh -c 'grep -q "^{\"ip\":\"10.2.3.4\",\"policy\":\"$1\",\"allowed\":true,\"policy_known\":true,\"action\":\"allow\",\"cidr\":\"10.0.0.0/8\",\"synced\":false,\"rule_id\":\"local_[0-9A-Za-z]*\"}$" "$0"' "$tmp/out" "$Q"
ureq "$S" "/v1/ip_policies/$P/check?ip=10.0.7.1"
check "a synced rule says synced:true" replied 200 '"allowed":true.*"cidr":"10.0.7.0/24","synced":true,"rule_id":"ipr_'
ureq "$S" "/v1/ip_policies/$P/check?ip=10.0.3.1"
check "a deny rule of the synced policy: not allowed" sh -c 'grep -q "\"allowed\":false.*\"action\":\"deny\",\"cidr\":\"10.0.3.0/24\"" "$0"' "$tmp/out"
ureq "$S" "/v1/ip_policies/ipp_2VhYfCwqPkX0n4sF5nYfW3eJzzz/check?ip=10.2.3.4"
check "a policy without rules: allowed false, policy_known false" replied 200 '"allowed":false,"policy_known":false'
for ip in 10.0.0.0/8 300.1.1.1 010.1.1.1 10.1.1 1.2.3.4%20 fe80::1%25eth0 2001:db8:::1 abc; do
    ureq "$S" "/v1/ip_policies/$Q/check?ip=$ip"
    check "check ip=$ip: 400" error_is ERR_INVALID_QUERY 400
done
ureq "$S" "/v1/ip_policies/$Q/check"
check "no ip: 400" error_is ERR_INVALID_QUERY 400
ureq "$S" "/v1/ip_policies/$Q/check?ip=10.2.3.4&ip=10.1.1.1"
check "ip twice: 400" is 400
ureq "$S" "/v1/ip_policies/$Q/check?ip=10.2.3.4&x=1"
check "another parameter: 400" is 400
ureq "$S" "/v1/ip_policies/pol_1/check?ip=10.2.3.4"
check "not a policy id: 400" is 400
# The index follows the cache: a deny rule added while the agent runs counts at once.
run rules create --cidr 10.2.0.0/16 --policy "$Q" --action deny
decide 10.2.3.4 false 10.2.0.0/16
treq "$T" "/v1/ip_policies/$Q/check?ip=10.2.3.4"
check "checks over TCP too" replied 200 '"allowed":false'
# A cached rule the index cannot take (host bits set, written behind rampart's
# back): no decision at all (it may be a deny rule), a 500 and not the caller's 400.
BAD=ipr_2VhYfCwqPkX0n4sF5nYfW3eJbad
sqlite3 "$DB" "INSERT INTO rules (id, cidr, policy_id, action, state) VALUES ('$BAD', '10.9.9.9/8', '$Q', 'deny', 'synced')"
refused_500() { [ "$status" = 500 ]; }
until_reply refused_500 "/v1/ip_policies/$Q/check?ip=10.2.3.4"
check "a rule the index refuses: 500 ERR_INTERNAL naming it" sh -c '[ "$0" = 500 ] && grep -q "\"error_code\":\"ERR_INTERNAL\"" "$1" && grep -q "$2" "$1"' "$status" "$tmp/out" "$BAD"
sqlite3 "$DB" "DELETE FROM rules WHERE id = '$BAD'"
decide 10.2.3.4 false 10.2.0.0/16

stop_agent m
check "stopped cleanly" status_is 0

check "no sanitizer report in any agent log" no_sanitizer_reports
checks_done
