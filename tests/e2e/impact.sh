#!/bin/sh
# `plan --impact LOG` and `apply --dry-run --impact LOG` over a real cache synced
# with a real serve-api: generated logs of each format (3,025 lines: six addresses
# 500 times each, 25 bad lines), queued creates, a delete and an edit flipping
# exactly the addresses they should, deny winning as in check, IPv6 and an
# IPv4-mapped address, the exit statuses, -o json and csv, and bad input.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"
trap 'stop_server; rm -rf "$tmp"' EXIT INT TERM

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
db="$tmp/cache.db"
start_server main || exit 1

# ---- the remote's rules, synced; then the queued changes ----
for r in "0.0.0.0/0 allow" "::/0 allow" "198.51.100.0/24 deny" "192.0.2.0/24 deny" \
    "10.0.0.0/8 deny"; do
    set -- $r
    "$RAMPART" --db "$db" rules create --policy $P --cidr "$1" --action "$2" >/dev/null
done
sync_until_converged "$db"
check "setup: five rules synced" status_is 0
id_of() { "$RAMPART" --db "$db" rules list -o csv | awk -F, -v c="$1" '$0 ~ c { print $1 }'; }
run --db "$db" rules create --policy $P --cidr 203.0.113.0/24 --action deny
check "setup: a deny create queued" status_is 0
run --db "$db" rules create --policy $P --cidr 10.0.0.0/24 --action allow
check "setup: an allow create under a synced deny queued" status_is 0
run --db "$db" rules create --policy $P --cidr 2001:db8::/32 --action deny
check "setup: an IPv6 deny create queued" status_is 0
run --db "$db" rules delete "$(id_of '198\.51\.100\.0/24')"
check "setup: a deny's delete queued" status_is 0
run --db "$db" rules update "$(id_of '192\.0\.2\.0/24')" --cidr 192.0.2.128/25
check "setup: a deny narrowed by an edit" status_is 0

# ---- the logs: six addresses 500 times each, then 25 bad lines ----
gen() { # gen FORMAT: 3,025 lines on stdout
    awk -v f="$1" 'BEGIN {
        split("203.0.113.9 198.51.100.7 192.0.2.10 ::ffff:10.0.0.1 2001:db8::1 8.8.8.8", a, " ");
        for (i = 0; i < 3000; i++) {
            ip = a[i % 6 + 1]; s = i % 60; m = int(i / 60) % 60;
            t = sprintf("28/Nov/2026:10:%02d:%02d +0000", m, s);
            iso = sprintf("2026-11-28T10:%02d:%02dZ", m, s);
            if (f == "combined")
                printf "%s - - [%s] \"GET /p?q=1 HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (X11)\"\n", ip, t;
            else if (f == "common")
                printf "%s - - [%s] \"GET / HTTP/1.1\" 200 512\n", ip, t;
            else if (f == "proxy")
                printf "127.0.0.1 - - [%s] \"GET / HTTP/1.1\" 200 1 \"-\" \"curl/8\" \"%s\"\n", t, ip;
            else if (f == "json")
                printf "{\"time\": \"%s\", \"conn\": {\"client_ip\": \"%s\", \"port\": 443}}\n", iso, ip;
            else
                print ip;
        }
        for (i = 0; i < 25; i++)
            print (f == "json" ? "{\"conn\": {}}" : "bad line " i);
    }'
}
for f in combined common proxy json plain; do gen $f >"$tmp/$f.log"; done
gzip -c "$tmp/combined.log" >"$tmp/combined.log.gz"

# ---- the report ----
run --db "$db" plan --policy $P --impact "$tmp/combined.log"
check "plan --impact: exit 0 without --fail-on-lockout" status_is 0
check "the plan comes first" out_has "^Plan: 3 to create, 1 to delete"
check "a deny create: 203.0.113.9 allow -> deny, by the pending /24" \
    out_has "^203\.0\.113\.9  *500 req  first 2026-11-28T10:00Z  last 2026-11-28T10:49Z  allow -> deny  *by allow 0\.0\.0\.0/0 (synced) -> deny 203\.0\.113\.0/24 (pending)$"
check "a queued delete: 198.51.100.7 deny -> allow" \
    out_has "^198\.51\.100\.7  *500 req .* deny -> allow  *by deny 198\.51\.100\.0/24 (removed) -> allow 0\.0\.0\.0/0 (synced)$"
check "an edit narrowing a deny: 192.0.2.10 deny -> allow (the base /24 before)" \
    out_has "^192\.0\.2\.10  *500 req .* deny -> allow  *by deny 192\.0\.2\.0/24 (removed) -> allow"
check "IPv6: 2001:db8::1 allow -> deny" \
    out_has "^2001:db8::1  *500 req .* allow -> deny  *by allow ::/0 (synced) -> deny 2001:db8::/32 (pending)$"
check "deny wins: the mapped 10.0.0.1 under a synced deny /8 does not flip" out_lacks "10\.0\.0\.1"
check "an address no change touches is not listed" out_lacks "8\.8\.8\.8"
check "a line per changed rule" out_has "^  deny 203\.0\.113\.0/24 (pending local_[0-9A-Za-z]*)  flips 1 address, 500 requests$"
check "the allow create under a deny flips nothing: no line" out_lacks "allow 10\.0\.0\.0/24 (pending"
check "the summary" out_has "^Newly denied: 2 addresses (1,000 requests); newly allowed: 2 addresses (1,000 requests)\.$"
check "bad lines counted, the first named" \
    err_has "25 of 3,025 lines could not be read (no address), not counted; the first: .*combined\.log:3001"

run --db "$db" plan --policy $P --impact "$tmp/combined.log" --fail-on-lockout
check "--fail-on-lockout: exit 6 when an address is newly denied" status_is 6
run --db "$db" plan --policy $P --impact "$tmp/combined.log" --detailed-exitcode
check "--detailed-exitcode keeps its meaning: 2" status_is 2

# ---- every format gives the same flips ----
flips() { grep -c ' req  first ' "$tmp/out"; }
run --db "$db" plan --policy $P --impact "$tmp/common.log"
check "common log: four addresses flip" [ "$(flips)" -eq 4 ]
run --db "$db" plan --policy $P --impact "$tmp/combined.log.gz"
check "gzip read as it is: four addresses flip" [ "$(flips)" -eq 4 ]
check "gzip: the same summary" out_has "^Newly denied: 2 addresses (1,000 requests)"
run --db "$db" plan --policy $P --impact "$tmp/json.log" --ip-key conn.client_ip --time-key time
check "JSON lines: four addresses flip, with times" \
    sh -c '[ "$(grep -c " req  first " "$1")" -eq 4 ] && grep -q "last 2026-11-28T10:49Z" "$1"' sh "$tmp/out"
check "JSON lines: bad lines counted" err_has "25 of 3,025 lines"
run --db "$db" plan --policy $P --impact "$tmp/json.log"
check "JSON lines without --ip-key: exit 1, naming it" refused 1 "\-\-ip-key"
run_in "$tmp/plain.log" --db "$db" plan --policy $P --impact -
check "plain list on standard input: four flips, no times" \
    sh -c '[ "$(grep -c " req  first " "$1")" -eq 4 ] && grep -q "first -  last -" "$1"' sh "$tmp/out"
run --db "$db" plan --policy $P --impact "$tmp/common.log" "$tmp/plain.log"
check "two logs (an operand after --impact): counts add up" out_has "^203\.0\.113\.9  *1,000 req"

# ---- behind a proxy ----
run --db "$db" plan --policy $P --impact "$tmp/proxy.log"
check "a proxy's log: no flip (every request is 127.0.0.1)" out_has "No address changes"
check "a proxy's log: warns and names --ip-field" err_has "behind a proxy or a tunnel agent.*--ip-field"
run --db "$db" plan --policy $P --impact "$tmp/proxy.log" --ip-field 10
check "--ip-field 10: the forwarded addresses flip" [ "$(flips)" -eq 4 ]
check "--ip-field 10: no proxy warning" err_lacks "behind a proxy"

# ---- for scripts ----
run --db "$db" plan --policy $P --impact "$tmp/combined.log" -o json
check "-o json: exit 0, the document alone" sh -c '[ "$0" -eq 0 ] && ! grep -q "^Plan:" "$1"' \
    "$status" "$tmp/out"
check "-o json: valid, its figures" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["lines"] == 3025 and d["bad"] == 25 and d["addresses"] == 6, d
assert d["newly_denied"] == {"addresses": 2, "requests": 1000}, d
assert d["newly_allowed"] == {"addresses": 2, "requests": 1000}, d
ips = sorted(c["ip"] for c in d["changes"])
assert ips == ["192.0.2.10", "198.51.100.7", "2001:db8::1", "203.0.113.9"], ips
c = [c for c in d["changes"] if c["ip"] == "203.0.113.9"][0]
assert c["before"]["allowed"] and not c["after"]["allowed"], c
assert c["after"]["state"] == "pending" and c["first"] == "2026-11-28T10:00:00Z", c
assert len(d["rules"]) == 4, d["rules"]
' "$tmp/out"
run --db "$db" plan --policy $P --impact "$tmp/combined.log" -o csv
check "-o csv: a header and a row per changed address" out_lines 5
check "-o csv: a row" out_has "^203\.0\.113\.9,500,2026-11-28T10:00:00Z,2026-11-28T10:49:54Z,allow,allow,0\.0\.0\.0/0,ipr_[0-9A-Za-z]*,synced,deny,deny,203\.0\.113\.0/24,local_[0-9A-Za-z]*,pending$"

# ---- never a clean exit for a run that checked nothing, or not all ----
run --db "$db" plan --policy $P --impact "$tmp/combined.log" --since 1h
check "--since: every line older: exit 1" refused 1 "no line of the logs was counted"
check "--since: the old lines counted" err_has "3,000 lines older than --since"
now=$(date -u +%d/%b/%Y:%H:%M:%S)
printf '203.0.113.9 - - [%s +0000] "GET / HTTP/1.1" 200 1\n198.51.100.7 - - [01/Jan/2020:00:00:00 +0000] "GET / HTTP/1.1" 200 1\n' \
    "$now" >"$tmp/recent.log"
run --db "$db" plan --policy $P --impact "$tmp/recent.log" --since 1h
check "--since 1h: the recent line only" sh -c 'grep -q "^203\.0\.113\.9 " "$0" && ! grep -q "^198" "$0"' \
    "$tmp/out"
run --db "$db" plan --policy $P --impact "$tmp/combined.log" --max-addresses 2 --fail-on-lockout
check "the address cap hit: never exit 0" sh -c '[ "$0" -ne 0 ]' "$status"
check "the address cap: named" err_has "raise --max-addresses"
printf 'nothing here\n' >"$tmp/junk.log"
run --db "$db" plan --policy $P --impact "$tmp/junk.log" --fail-on-lockout
check "no line counted: exit 1" refused 1 "no line of the logs was counted"

# ---- a progress line, on a terminal only (every 1,048,576 lines) ----
awk 'BEGIN { for (i = 0; i < 1100000; i++) print "198.51.100." (i % 200) }' >"$tmp/long.log"
run --db "$db" plan --policy $P --impact "$tmp/long.log"
check "not a terminal: no progress line" err_lacks "reading .*long\.log"
if command -v script >/dev/null 2>&1; then
    script -qc "\"$RAMPART\" --db \"$db\" plan --policy $P --impact \"$tmp/long.log\" >/dev/null" \
        "$tmp/typescript" >/dev/null 2>&1
    check "on a terminal: the progress line counts the lines read" \
        grep -q "reading .*long\.log: 1\.0M lines" "$tmp/typescript"
else
    skip "on a terminal: the progress line counts the lines read" "script(1) is not installed"
fi

# ---- bad usage ----
run --db "$db" plan --impact "$tmp/combined.log"
check "no --policy and no policy setting: exit 2" refused 2 "which IP policy?"
RAMPART_POLICY=$P run --db "$db" plan --impact "$tmp/combined.log" --fail-on-lockout
check "the policy setting fills --policy: the same decisions, exit 6" \
    sh -c '[ "$0" -eq 6 ] && grep -q "^203\.0\.113\.9 " "$1"' "$status" "$tmp/out"
check "... and says where the policy came from" err_has "from RAMPART_POLICY"
run --db "$db" plan --since 1h
check "an impact option without --impact: exit 2" refused 2 "option of --impact"
run --db "$db" plan --policy $P --impact "$tmp/combined.log" --json
check "--json with --impact: refused, naming -o json" refused 2 "-o json"
run --db "$db" plan --policy $P --impact "$tmp/combined.log" --since 5x
check "a bad duration: exit 2" refused 2 "not a duration"
run --db "$db" plan --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJzzz --impact "$tmp/combined.log"
check "a policy with no rules here: exit 1, said" refused 1 "has no rules in this cache"
run --db "$db" plan --policy $P --impact "$tmp/nonexistent.log"
check "a log that is not there: exit 1, named" refused 1 "cannot open .*nonexistent\.log"

# ---- apply --dry-run --impact: the apply's own change on top ----
printf '8.8.8.0/24\n' >"$tmp/list.txt"
run --db "$db" apply --policy $P --action deny --name block --dry-run --impact "$tmp/common.log" \
    "$tmp/list.txt"
check "apply --dry-run --impact: exit 0" status_is 0
check "apply: 8.8.8.8 newly denied by the apply's rule" \
    out_has "^8\.8\.8\.8  *500 req .* allow -> deny  *by allow 0\.0\.0\.0/0 (synced) -> deny 8\.8\.8\.0/24 (apply)$"
check "apply: the queued changes count too" out_has "^Newly denied: 3 addresses (1,500 requests)"
run --db "$db" apply --policy $P --action deny --name block --impact "$tmp/common.log" \
    "$tmp/list.txt"
check "apply --impact without --dry-run: refused" refused 2 "goes with --dry-run"
run_in "$tmp/list.txt" --db "$db" apply --policy $P --action deny --name block --dry-run \
    --impact - -
check "apply - --impact -: standard input for both, refused" refused 2 "both the list and the log"
check "... and nothing queued" sh -c '! "$0" --db "$1" rules list | grep -q "8\.8\.8\.0/24"' \
    "$RAMPART" "$db"

# ---- once synced, before and after agree ----
sync_until_converged "$db"
check "setup: the queue synced" status_is 0
run --db "$db" plan --policy $P --impact "$tmp/combined.log" --fail-on-lockout
check "after the sync: nothing flips, exit 0" sh -c '[ "$0" -eq 0 ] && grep -q "No address changes" "$1"' \
    "$status" "$tmp/out"
check "after the sync: says no queued change touches the policy" out_has "no queued change touches"

# ---- a conflict's side is labelled conflict, not pending: a sync leaves it ----
db2="$tmp/other.db"
sync_until_converged "$db2"
check "setup: a second cache synced" status_is 0
narrow=$(id_of '192\.0\.2\.128/25')
run --db "$db" rules update "$narrow" --cidr 192.0.2.0/26
check "setup: the deny edited here" status_is 0
run --db "$db2" rules delete "$narrow"
sync_until_converged "$db2"
check "setup: ... and deleted there" status_is 0
"$RAMPART" --db "$db" sync >/dev/null 2>&1
run --db "$db" plan --policy $P --impact "$tmp/common.log"
check "a conflict's local side: labelled conflict" \
    out_has "^192\.0\.2\.10  *500 req .* allow -> deny  *by allow 0\.0\.0\.0/0 (synced) -> deny 192\.0\.2\.0/26 (conflict)$"
checks_done
