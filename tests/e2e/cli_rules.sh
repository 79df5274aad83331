#!/bin/sh
# `rampart rules …` over a real database file, including bad input.
. "$(dirname "$0")/lib.sh"

P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
P2=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b

run rules create --cidr 10.0.0.0/8 --policy $P1 --action allow --description office
check "create: exit 0" status_is 0
check "create: says queued with a local id" out_has "created rule local_[0-9A-Za-z]* (allow 10.0.0.0/8 in $P1), queued"
check "create: database file is 0600" [ "$(stat -c %a "$XDG_DATA_HOME/rampart/rampart.db")" = 600 ]
check "create: data dir is 0700" [ "$(stat -c %a "$XDG_DATA_HOME/rampart")" = 700 ]

run rules create --cidr 10.0.0.1/8 --policy $P1 --action allow
check "host bits: refused with the fix" refused 2 "host bits set: did you mean 10.0.0.0/8?"
run rules create --cidr 10.1.2.3 --policy $P1 --action deny
check "mask missing: refused" refused 2 "mask"
run rules create --cidr 010.0.0.0/8 --policy $P1 --action deny
check "leading zero: refused" refused 2 "leading zero"
run rules create --cidr 10.0.0.0/33 --policy $P1 --action deny
check "/33: refused" refused 2 "32"
run rules create --cidr 10.0.0.0/8 --policy $P1 --action block
check "bad action: refused" refused 2 "allow"
run rules create --cidr 10.0.0.0/8 --policy pol_123 --action deny
check "bad policy id: refused" refused 2 "ipp_"
run rules create --cidr 10.0.0.0/8 --policy $P1 --action deny
check "same cidr twice in a policy: refused, names the rule" refused 2 "local_"
run rules create --cidr 10.0.0.0/8 --policy $P1
check "missing --action: usage error" refused 2 "required"
run rules create --cidr 10.0.0.0/8 --policy $P1 --action deny --frobnicate
check "unknown option: usage error" refused 2 "unknown option '--frobnicate'"
run rules create --cidr 10.0.0.0/8 --policy $P1 --action deny --api-key secret
check "--api-key is refused with the reason" refused 2 "never taken from the command line"
long=$(printf 'x%.0s' $(seq 256))
run rules create --cidr 11.0.0.0/8 --policy $P1 --action deny --description "$long"
check "256-byte description: refused" refused 2 "255"
run rules list
check "bad input changed nothing: one rule" out_lines 2

run rules create --cidr 2001:DB8::/32 --policy $P2 --action deny --json
check "IPv6 create: --json" status_is 0
check "IPv6 stored lower-case" out_has '"cidr": "2001:db8::/32"'
check "--json has state new" out_has '"state": "new"'
check "--json has ip_policy" out_has "\"id\": \"$P2\""
run rules create --cidr 192.168.0.0/16 --policy $P2 --action allow --description "lab é" \
    --metadata '{"k":1}'
check "create with metadata" status_is 0

run rules list
check "list: header and 3 rows" out_lines 4
check "list: header" out_has "^ID  *STATE  *POLICY  *ACTION  *CIDR  *DESCRIPTION"
run rules list --policy $P2
check "list --policy: 2 rows" out_lines 3
run rules list --filter OFFICE
check "list --filter is case-insensitive" out_has "office"
check "list --filter: 1 row" out_lines 2
run rules list --filter nothing-like-this
check "list --filter with no match: says so" err_has "no rules match"
run rules list --policy nope
check "list --policy bad id: refused" refused 2 "ipp_"
run rules list --json
check "list --json: an array" out_has '^\['
check "list --json: three objects" [ "$(grep -c '"cidr"' "$tmp/out")" -eq 3 ]

id=$("$RAMPART" rules list --filter office | awk 'NR==2 {print $1}')
run rules get "$id"
check "get: detail view" out_has "^cidr  *10.0.0.0/8"
check "get: state" out_has "^state  *new"
run rules get "$id" --json
check "get --json" out_has "\"id\": \"$id\""
run rules get ipr_doesnotexist
check "get unknown id: exit 3" refused 3 "ipr_doesnotexist"
run rules get
check "get without id: usage" refused 2 "missing argument"
run rules get a b
check "get with two ids: usage" refused 2 "unexpected argument 'b'"

# Export, then import into a second database: all-or-nothing.
run rules export
check "export: exit 0" status_is 0
cp "$tmp/out" "$tmp/export.json"
check "export: wire format without state" out_lacks '"state"'
run --db "$tmp/second.db" rules import "$tmp/export.json"
check "import export into a fresh db" out_has "imported 3 rules (3 queued for creation, 0 already synced)"
run --db "$tmp/second.db" rules list
check "import: rows are there" out_lines 4

cat >"$tmp/remote.json" <<JSON
{"ip_policy_rules": [
 {"id": "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01", "uri": "https://api.example.com/ip_policy_rules/ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01",
  "created_at": "2025-09-04T10:11:15Z", "description": "from the api", "cidr": "172.16.0.0/12",
  "ip_policy": {"id": "$P1", "uri": "https://api.example.com/ip_policies/$P1"}, "action": "deny"}
], "uri": "https://api.example.com/ip_policy_rules", "next_page_uri": null}
JSON
run --db "$tmp/second.db" rules import "$tmp/remote.json" --json
check "import an API list object: synced" out_has '"synced": 1'
run --db "$tmp/second.db" rules get ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01
check "imported remote rule is synced" out_has "^state  *synced"

cat >"$tmp/bad.json" <<JSON
[{"cidr": "10.20.0.0/16", "ip_policy_id": "$P1", "action": "allow"},
 {"cidr": "10.30.0.1/16", "ip_policy_id": "$P1", "action": "allow"}]
JSON
run --db "$tmp/second.db" rules import "$tmp/bad.json"
check "import with one bad rule: refused, names it and its line" refused 2 \
    "rule 2 (line 2): .*did you mean 10.30.0.0/16"
run --db "$tmp/second.db" rules list --filter 10.20.
check "import with one bad rule: nothing imported" err_has "no rules match"
printf '[{"cidr": 5}]' >"$tmp/types.json"
run --db "$tmp/second.db" rules import "$tmp/types.json"
check "import wrong type: refused" refused 2 "cidr"
printf '[{"cidr": "10.9.0.0/16", ' >"$tmp/trunc.json"
run --db "$tmp/second.db" rules import "$tmp/trunc.json"
check "import truncated JSON: refused" status_is 2
run --db "$tmp/second.db" rules import "$tmp/missing.json"
check "import missing file: refused" refused 2 "cannot open"
printf '[{"cidr": "10.40.0.0/16", "ip_policy_id": "%s", "action": "deny"}]' $P2 >"$tmp/one.json"
run_in "$tmp/one.json" --db "$tmp/second.db" rules import -
check "import from stdin" out_has "imported 1 rules"
run_in "$tmp/one.json" --db "$tmp/second.db" rules import -
check "the same rules without ids again: nothing to import" \
    out_has "Nothing to import: all 1 rules are already in the cache"

# What export wrote imports back into the same cache as a no-op; an edited copy
# queues its differences as `rules update` would, and nothing else.
run --db "$tmp/second.db" rules export
cp "$tmp/out" "$tmp/round.json"
rows=$(grep -c '"id"' "$tmp/round.json")
run --db "$tmp/second.db" rules import "$tmp/round.json"
check "export, then import into the same cache: nothing to import" \
    out_has "Nothing to import: all $rows rules are already in the cache"
run --db "$tmp/second.db" rules import "$tmp/round.json" --json
check "... --json counts them unchanged" out_has "\"imported\": 0, .*\"unchanged\": $rows"
sed 's/"description":"from the api"/"description":"from the file"/' "$tmp/round.json" \
    >"$tmp/edited.json"
run --db "$tmp/second.db" rules import "$tmp/edited.json"
check "an edited export: one edit queued, the rest unchanged" \
    out_has "imported 1 rules (0 queued for creation, 0 already synced, 1 updated); $((rows - 1)) unchanged"
run --db "$tmp/second.db" rules get ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01
check "... the synced rule is edited, a PATCH for the next sync" out_has "^state  *edited"
run --db "$tmp/second.db" plan
check "... and the plan shows the edit" out_has "from the file"
sed 's/"action":"deny"/"action":"allow"/' "$tmp/round.json" >"$tmp/action.json"
run --db "$tmp/second.db" rules import "$tmp/action.json"
check "an export whose action changed: refused, nothing imported" \
    refused 2 "nothing imported: rule [0-9]* (line [0-9]*): rule .*: action differs"

# Delete: never-synced rows go; an unknown id in the list deletes nothing.
run rules delete "$id" ipr_unknown000
check "delete with an unknown id: exit 3" refused 3 "nothing deleted"
run rules get "$id"
check "... and the first id is still there" status_is 0
run rules delete "$id"
check "delete a never-synced rule: removed" out_has "never synced: removed"
run rules get "$id"
check "deleted rule is gone" status_is 3
run --db "$tmp/second.db" rules delete ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01
check "delete a synced rule: marked" out_has "marked for deletion"
run --db "$tmp/second.db" rules get ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01
check "marked rule shows state deleting" out_has "^state  *deleting"
run --db "$tmp/second.db" rules delete ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01
check "delete twice: already marked" out_has "already marked"

run rules --help
check "rules --help lists the commands" out_has "import"
run rules create --help
check "rules create --help shows options" out_has "--cidr CIDR"
run rules frob
check "unknown subcommand: usage" refused 2 "unknown command 'frob'"
run rules lst
check "mistyped subcommand: suggestion" err_has "did you mean 'list'"

# Export leaves out rows on their way out, so its file imports back cleanly.
db3="$tmp/third.db"
cat >"$tmp/seed.json" <<JSON
[{"id": "ipr_AAA", "cidr": "10.1.0.0/16", "ip_policy": {"id": "$P1"}, "action": "allow"}]
JSON
run --db "$db3" rules import "$tmp/seed.json"
run --db "$db3" rules delete ipr_AAA
run --db "$db3" rules create --cidr 10.1.0.0/16 --policy $P1 --action deny
check "re-create a CIDR whose rule is being deleted" status_is 0
run --db "$db3" rules export
cp "$tmp/out" "$tmp/export3.json"
check "export leaves out the rule being deleted" out_lacks "ipr_AAA"
run --db "$tmp/fourth.db" rules import "$tmp/export3.json"
check "... and imports back into a fresh database" out_has "imported 1 rules"

printf '[{"cidr":"10.2.0.0/16","ip_policy_id":"%s","action":"deny","id":"ipr_B","created_at":"\\u001b[31mX"}]' \
    $P1 >"$tmp/ts.json"
run --db "$tmp/fifth.db" rules import "$tmp/ts.json"
check "import refuses a bad created_at" refused 2 "created_at is not an RFC 3339 timestamp"
printf '[{"cidr":"10.3.0.0/16","ip_policy_id":"%s","action":"deny","id":"ipr_C","uri":"javascript:x"}]' \
    $P1 >"$tmp/uri.json"
run --db "$tmp/fifth.db" rules import "$tmp/uri.json"
check "import refuses a uri that is not http(s)" refused 2 "uri must be an http(s) URL"
run --db "$tmp/sixth.db" rules import "$tmp/does-not-exist.json"
check "import of a missing file creates no database" [ ! -e "$tmp/sixth.db" ]

# Memory does not grow with the file: 100,000 rules imported within the goal the
# bench measures for 1,000,000 (skipped under ASan, whose shadow memory counts).
maxrss="$(dirname "$RAMPART")/tools/maxrss"
if [ -x "$maxrss" ] && ! ldd "$RAMPART" 2>/dev/null | grep -q libasan; then
    awk -v p=$P1 'BEGIN { printf "["; for (i = 0; i < 100000; i++)
        printf "%s{\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy_id\":\"%s\",\"action\":\"allow\"}",
            (i ? ",\n" : ""), int(i / 65536), int(i / 256) % 256, i % 256, p; print "]" }' \
        >"$tmp/big.json"
    "$maxrss" "$tmp/rss" "$RAMPART" --db "$tmp/big.db" rules import "$tmp/big.json" \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    rss_under() { status_is 0 && [ "$(cat "$tmp/rss")" -lt "$1" ]; }
    check "import of 100,000 rules: peak RSS under 32 MiB ($(cat "$tmp/rss") KiB)" rss_under 32768
fi

run --db="$tmp/eq.db" rules create --cidr 10.0.0.0/8 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a \
    --action allow
check "--db=PATH works" [ -e "$tmp/eq.db" ]
run --db="$tmp/missing/none.db" rules list
check "a read of a cache that is not there: exit 1, naming it, nothing created" \
    sh -c '[ "$0" -eq 1 ] && grep -q "no cache at .*/missing/none.db" "$1" && [ ! -e "$2" ]' \
    "$status" "$tmp/err" "$tmp/missing"
run --db="$tmp/eq.db" rules get local_nope
check "an unknown id: exit 3, naming the cache it looked in" \
    refused 3 "no rule local_nope (in the cache $tmp/eq.db)"
RAMPART_DB="$tmp/missing/none.db" run plan --detailed-exitcode
check "... plan --detailed-exitcode on it: 1 (2 means changes), nothing created" \
    sh -c '[ "$0" -eq 1 ] && [ ! -e "$1" ]' "$status" "$tmp/missing"
run --db
check "--db without a value: says so" refused 2 "needs a value"
run rules list -xy
check "short option cluster: names the letter" refused 2 "unknown option '-x'"
run version --bogus
check "version with an argument: usage error" status_is 2
if [ -w /dev/full ]; then
    "$RAMPART" rules list >/dev/full 2>"$tmp/err"
    status=$?
    check "a failed write to stdout is reported" refused 1 "cannot write the output"
fi

# Two processes writing to a cache that does not exist yet: both create it (the
# WAL switch and the migration wait for each other), neither fails.
race_fails=0
i=0
while [ $i -lt 10 ]; do
    db="$tmp/race$i.db"
    "$RAMPART" --db "$db" rules create --cidr 10.$i.0.0/16 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a \
        --action allow >/dev/null 2>"$tmp/race.a" &
    "$RAMPART" --db "$db" rules create --cidr 10.$((i + 100)).0.0/16 \
        --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a --action allow >/dev/null 2>"$tmp/race.b"
    b=$?
    wait $!
    a=$?
    if [ $a -ne 0 ] || [ $b -ne 0 ] ||
        [ "$("$RAMPART" --db "$db" rules list --json | grep -o '"cidr"' | wc -l)" -ne 2 ]; then
        race_fails=$((race_fails + 1))
    fi
    i=$((i + 1))
done
check "two processes creating rules in a new cache at once: both saved, 10 times" \
    [ "$race_fails" -eq 0 ]
checks_done
