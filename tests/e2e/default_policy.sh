#!/bin/sh
# The policy setting (config key policy, per profile; RAMPART_POLICY): it fills the
# --policy that rules create, apply, export and check need, --policy overrides it,
# it never filters a listing, and a command that uses it says so on stderr (never in
# --json output, nor when --policy is given). A malformed one is refused naming the
# file's line or the variable; none at all is a usage error naming both ways.
. "$(dirname "$0")/lib.sh"
unset RAMPART_PROFILE RAMPART_POLICY

P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
P2=ipp_2VhYfCwqPkX0n4sF5nYfW3eStg2
P3=ipp_2VhYfCwqPkX0n4sF5nYfW3eOth3
cfg="$XDG_CONFIG_HOME/rampart/config"
mkdir -p "$XDG_CONFIG_HOME/rampart"
cat >"$cfg" <<CFG
db = $tmp/default.db
policy = $P1

[profile.staging]
db = $tmp/staging.db
policy = $P2
CFG

# ---- rules create ----
run rules create --cidr 10.0.0.0/8 --action allow
check "rules create without --policy: the setting's policy" \
    sh -c '[ "$0" -eq 0 ] && grep -q "in $1)" "$2"' "$status" "$P1" "$tmp/out"
check "... said on stderr, with where it was set" \
    err_has "^rampart: policy $P1 (from the policy setting of profile default)$"
run --profile staging rules create --cidr 10.0.0.0/8 --action deny
check "--profile staging: its own section's policy" \
    sh -c '[ "$0" -eq 0 ] && grep -q "in $1)" "$2"' "$status" "$P2" "$tmp/out"
check "... named with its profile" err_has "(from the policy setting of profile staging)"
run rules create --cidr 10.1.0.0/16 --action deny --policy $P3
check "--policy overrides the setting" out_has "in $P3)"
check "... and then nothing more on stderr (a script sees no change)" err_empty
run rules create --cidr 10.2.0.0/16 --action allow --json
check "--json: nothing on stderr" err_empty
check "... the rule's policy is the setting's" \
    sh -c 'grep -A1 "\"ip_policy\"" "$1" | grep -q "\"id\": \"$0\""' "$P1" "$tmp/out"
RAMPART_POLICY=$P3 run rules create --cidr 10.3.0.0/16 --action allow
check "RAMPART_POLICY overrides the file" out_has "in $P3)"
check "... and is named" err_has "^rampart: policy $P3 (from RAMPART_POLICY)$"

# ---- never a filter ----
run rules list -o json
check "rules list without --policy: every policy, the setting's or not" \
    sh -c 'grep -q "$0" "$2" && grep -q "$1" "$2"' "$P1" "$P3" "$tmp/out"
check "... and nothing said about a policy" err_empty
run rules list --policy $P3 -o name
check "rules list --policy still filters" out_lines 2

# ---- check: POLICY IP... or IP... ----
run check 10.9.9.9
check "check IP: decided in the setting's policy (allowed by 10.0.0.0/8)" \
    sh -c '[ "$0" -eq 0 ] && grep -q "^10.9.9.9  *allowed" "$1"' "$status" "$tmp/out"
check "... the policy named on stderr" err_has "^rampart: policy $P1 (from"
run check $P3 10.1.2.3
check "check POLICY IP still works (denied in $P3: exit 1)" \
    sh -c '[ "$0" -eq 1 ] && grep -q "^10.1.2.3  *denied" "$1"' "$status" "$tmp/out"
check "... nothing said about the setting" err_empty
run check --policy $P3 10.1.2.3 10.9.9.9
check "check --policy P IP IP" \
    sh -c '[ "$0" -eq 1 ] && grep -q "^10.9.9.9  *denied" "$1"' "$status" "$tmp/out"
run check 10.9.9.9 --json
check "check --json: the policy in the output, nothing on stderr" \
    sh -c 'grep -q "\"policy\": \"$0\"" "$1" && [ ! -s "$2" ]' "$P1" "$tmp/out" "$tmp/err"
run check $P1 --policy $P3 10.9.9.9
check "check with two policies: refused" refused 2 "two policies"
run check $P1
check "check POLICY without an address: missing argument" refused 2 "missing argument"
run check 10.9.9.9 010.1.1.1
check "check with the setting: every word an address (#2 is bad)" refused 2 "address #2"

# ---- apply and export ----
printf '192.0.2.0/24\n198.51.100.7 ; jump host\n' >"$tmp/list.txt"
run apply --action allow --name office "$tmp/list.txt"
check "apply without --policy: planned in the setting's policy" \
    sh -c '[ "$0" -eq 0 ] && grep -q "$1" "$2"' "$status" "$P1" "$tmp/out"
check "... named on stderr" err_has "^rampart: policy $P1 (from the policy setting"
run rules list --policy $P1 --filter 192.0.2 -o name
check "... the rule is in it" out_lines 1
run apply --action allow --name office --json "$tmp/list.txt"
check "apply --json: its policy field, nothing on stderr" \
    sh -c 'grep -q "\"policy\": \"$0\"" "$1" && [ ! -s "$2" ]' "$P1" "$tmp/out" "$tmp/err"
run export --format nginx
check "export without --policy: the setting's rules" \
    sh -c '[ "$0" -eq 0 ] && grep -q "allow 10.0.0.0/8;" "$1" && grep -q "allow 192.0.2.0/24;" "$1" &&
           ! grep -q "10.1.0.0/16" "$1"' "$status" "$tmp/out"
check "... the policy said on stderr, not in the file" \
    sh -c 'grep -q "policy $0" "$1" && ! grep -q "rampart: policy" "$2"' "$P1" "$tmp/err" "$tmp/out"
run export --format nginx --policy $P3
check "export --policy: that policy, nothing on stderr" \
    sh -c '[ "$0" -eq 0 ] && grep -q "deny 10.1.0.0/16;" "$1" && [ ! -s "$2" ]' \
    "$status" "$tmp/out" "$tmp/err"

# ---- profiles shows each one's ----
run profiles
check "profiles: the policy of each profile" \
    sh -c 'grep -q "^\* default .*$0" "$2" && grep -q "^  staging .*$1" "$2"' "$P1" "$P2" "$tmp/out"
run profiles --json
check "profiles --json: policy" out_has "\"name\": \"staging\", .*\"policy\": \"$P2\""

# ---- with a server: the setting's policy is the one the remote gets ----
run --sandbox rules create --cidr 203.0.113.0/24 --action deny --sync --json
check "--sandbox create --sync: the remote holds the rule in the setting's policy" \
    sh -c 'grep -q "\"state\": \"synced\"" "$1" && grep -q "\"id\": \"$0\"" "$1"' "$P1" "$tmp/out"

# ---- no setting: a usage error naming both ways ----
cat >"$tmp/plain.conf" <<CFG
db = $tmp/plain.db
CFG
for line in "rules create --cidr 10.0.0.0/8 --action allow" "check 10.9.9.9" \
    "export --format nginx" "apply --action allow $tmp/list.txt"; do
    # shellcheck disable=SC2086 # the words of the line
    RAMPART_CONFIG="$tmp/plain.conf" run $line
    check "no policy, no setting: $line: exit 2, naming --policy and the setting" \
        sh -c '[ "$0" -eq 2 ] && grep -q -- "--policy ipp_ID" "$1" && grep -q "RAMPART_POLICY" "$1"' \
        "$status" "$tmp/err"
done
check "... nothing was created" [ ! -e "$tmp/plain.db" ]
RAMPART_CONFIG="$tmp/plain.conf" run check pol_123 10.9.9.9
check "check with a word that is no address nor ipp_: the policy id's error" \
    refused 2 "must start with ipp_"
RAMPART_CONFIG="$tmp/plain.conf" run rules create --cidr 10.0.0.0/8 --action allow \
    --policy pol_123
check "a bad --policy: refused, naming ipp_" refused 2 "^rampart: policy id must start with ipp_"

# ---- a malformed setting: where it came from ----
cat >"$tmp/bad.conf" <<CFG
db = $tmp/plain.db
[profile.staging]
policy = pol_123
CFG
RAMPART_CONFIG="$tmp/bad.conf" run rules list
check "policy = pol_123 in a section: refused, naming the file and line" \
    refused 2 "bad.conf:3: policy (an IP policy id) must start with ipp_; this one starts with pol_"
before=$("$RAMPART" rules list -o name | wc -l)
RAMPART_POLICY='ipp_x y' run rules create --cidr 10.0.0.0/8 --action allow
check "RAMPART_POLICY malformed: refused, naming the variable" refused 2 "^rampart: RAMPART_POLICY: policy"
check "... nothing queued" [ "$("$RAMPART" rules list -o name | wc -l)" -eq "$before" ]
RAMPART_POLICY='' run check 10.9.9.9
check "RAMPART_POLICY empty: the file's setting" err_has "(from the policy setting of profile default)"
checks_done
