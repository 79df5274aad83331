#!/bin/sh
# Output for scripts, offline on one cache: -o table|wide|json|yaml|name|csv on
# rules/creds list and get (--json byte for byte -o json; YAML read back equals the
# JSON; CSV quoting and CRLF), --no-headers, --limit, --sort in the console's
# orders (checked row by row, both ways), refusals naming the valid values (exit
# 2); plan --detailed-exitcode 0/2/1; the shell completions: bash (its function
# called with COMP_WORDS) and zsh (its function, and a real TAB in tmux) completing
# options and ids, policy ids and CIDRs from the cache through `__complete`.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
db="$tmp/cache.db"
r() { run --db "$db" "$@"; }

if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is missing (the JSON and CSV checks need it)"
    exit 1
fi
# py EXPR: EXPR over j (stdout as JSON), t (stdout as text) is true.
py() {
    python3 -c 'import csv, io, json, sys
t = open(sys.argv[1], newline="").read()
try:
    j = json.loads(t)
except ValueError:
    j = None
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$1"
}
same() { cmp -s "$1" "$2"; }

# ---- a cache: four rules in two policies, a credential ----
r rules create --cidr 10.0.0.0/8 --policy ipp_a --action allow --description 'office, "main"'
A=$(sed -n 's/^created rule \(local_[0-9A-Za-z]*\) .*/\1/p' "$tmp/out")
r rules create --cidr 9.0.0.0/8 --policy ipp_b --action deny
r rules create --cidr 2001:db8::/32 --policy ipp_a --action deny --description v6
r rules create --cidr 10.1.0.0/16 --policy ipp_b --action allow
r creds create --description web --acl 'bind:*.example.com' --acl bind:x.example.org
C=$(sed -n 's/^created credential \(local_[0-9A-Za-z]*\),.*/\1/p' "$tmp/out")
check "setup: four rules and a credential" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$A" "$C"

# ---- json: --json is -o json, byte for byte ----
for args in "rules list" "creds list" "rules get $A" "creds get $C" "rules list --sort cidr"; do
    # shellcheck disable=SC2086 # the words of the command
    "$RAMPART" --db "$db" $args --json >"$tmp/json1" 2>&1
    # shellcheck disable=SC2086
    "$RAMPART" --db "$db" $args -o json >"$tmp/json2" 2>&1
    # shellcheck disable=SC2086
    "$RAMPART" --db "$db" $args --output=json >"$tmp/json3" 2>&1
    cp "$tmp/json2" "$tmp/out"
    check "$args: --json, -o json and --output=json are the same bytes" sh -c \
        'cmp -s "$0" "$1" && cmp -s "$0" "$2" && [ -s "$0" ]' "$tmp/json1" "$tmp/json2" \
        "$tmp/json3"
done
r rules list -ojson
check "-ojson (attached) works too" py 'len(j) == 4 and j[0]["state"] == "new"'

# ---- yaml: the JSON document ----
# settle_doctor ARGS: for doctor, one run first. Its read-only open leaves the
# -wal and -shm files that the commands before it removed, and the next run
# reports them ("ok", where the first said "skip"): compare two runs after it.
settle_doctor() { [ "$1" != doctor ] || "$RAMPART" --db "$db" doctor >/dev/null 2>&1; }
if python3 -c 'import yaml' 2>/dev/null; then
    for args in "rules list" "creds list" "rules get $A" "creds get $C"; do
        # shellcheck disable=SC2086
        "$RAMPART" --db "$db" $args -o yaml >"$tmp/yaml" 2>"$tmp/err"
        # shellcheck disable=SC2086
        "$RAMPART" --db "$db" $args -o json >"$tmp/out" 2>>"$tmp/err"
        check "$args -o yaml reads back (PyYAML) as -o json" python3 -c 'import json, sys, yaml
sys.exit(0 if yaml.safe_load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)' \
            "$tmp/yaml" "$tmp/out"
    done
    # The reports too: status, check, doctor and plan.
    for args in "status" "check ipp_a 10.0.0.1 192.0.2.1" "doctor" "plan"; do
        settle_doctor "$args"
        # shellcheck disable=SC2086
        "$RAMPART" --db "$db" $args -o yaml >"$tmp/yaml" 2>"$tmp/err"
        # shellcheck disable=SC2086
        "$RAMPART" --db "$db" $args --json >"$tmp/out" 2>>"$tmp/err"
        check "$args -o yaml reads back (PyYAML) as --json" python3 -c 'import json, sys, yaml
sys.exit(0 if yaml.safe_load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)' \
            "$tmp/yaml" "$tmp/out"
    done
else
    skip "-o yaml reads back as -o json" "PyYAML is not installed (the unit test reads it back with libyaml)"
fi
# The reports: -o table|json|yaml, --json is -o json byte for byte.
for args in "status" "check ipp_a 10.0.0.1 192.0.2.1" "doctor" "plan"; do
    settle_doctor "$args"
    # shellcheck disable=SC2086
    "$RAMPART" --db "$db" $args -o json >"$tmp/yaml" 2>"$tmp/err"
    # shellcheck disable=SC2086
    "$RAMPART" --db "$db" $args --json >"$tmp/out" 2>>"$tmp/err"
    check "$args: -o json is --json" cmp -s "$tmp/yaml" "$tmp/out"
    # shellcheck disable=SC2086
    "$RAMPART" --db "$db" $args -o table >"$tmp/yaml" 2>"$tmp/err"
    # shellcheck disable=SC2086
    "$RAMPART" --db "$db" $args >"$tmp/out" 2>>"$tmp/err"
    check "$args: -o table is the default form" cmp -s "$tmp/yaml" "$tmp/out"
done
r check ipp_a 192.0.2.1 -o yaml
check "check -o yaml keeps its exit status (1: denied)" sh -c '[ "$0" -eq 1 ] && grep -q "allowed: false" "$1"' \
    "$status" "$tmp/out"
r status -o wide
check "status -o wide: refused, naming what it prints" refused 2 "status prints one of table, json, yaml"
r doctor -o csv
check "doctor -o csv: refused" refused 2 "doctor prints one of table, json, yaml"
r check ipp_a 10.0.0.1 -o xml
check "check -o xml: refused with its formats" refused 2 "one of table, json, yaml"
r status --json -o yaml
check "status --json -o yaml: refused" refused 2 "not both"
r __complete values status -o
check "__complete values status -o: table, json, yaml" sh -c '[ "$(tr "\n" " " <"$0")" = "table json yaml " ]' "$tmp/out"
r rules list -o yaml --filter nothing-matches
check "an empty list in YAML is []" sh -c '[ "$(cat "$0")" = "[]" ]' "$tmp/out"

# ---- csv: RFC 4180 ----
r rules list -o csv
check "csv: the header names every field" py \
    't.split("\r\n")[0] == "id,state,ip_policy_id,action,cidr,description,metadata,created_at,uri,policy_uri,error"'
check "csv: records end with CRLF, one per rule and the header" py \
    't.endswith("\r\n") and t.count("\r\n") == 5 and "\n" not in t.replace("\r\n", "")'
check "csv: a comma and quotes are quoted, quotes doubled" out_has ',"office, ""main""",'
check "csv: Python's csv reads the description back exactly" py \
    '[row[5] for row in csv.reader(io.StringIO(t)) if row[0] == "'"$A"'"] == ["office, \"main\""]'
r creds list -o csv --no-headers
check "csv --no-headers: the credential only; its ACL in one field" py \
    '[r[4] for r in csv.reader(io.StringIO(t))] == ["bind:*.example.com, bind:x.example.org"]'
r rules get "$A" -o csv
check "get -o csv: header and the one row" py 't.count("\r\n") == 2 and t.startswith("id,state,")'
# CSV is exact for programs; on a terminal, a control character is shown escaped.
esc=$(printf '\033')
run --db "$tmp/esc.db" rules create --cidr 192.0.2.0/24 --policy ipp_e --action deny \
    --description "a${esc}[2Jb"
run --db "$tmp/esc.db" rules list -o csv --no-headers
check "csv piped: the description exactly, ESC and all" grep -q "a${esc}\[2Jb" "$tmp/out"
if command -v script >/dev/null 2>&1; then
    script -qec "$RAMPART --db $tmp/esc.db rules list -o csv --no-headers" /dev/null \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "csv on a terminal: the ESC shown as \\x1b, never sent" \
        sh -c '[ "$0" -eq 0 ] && grep -q "a\\\\x1b\[2Jb" "$1" && ! grep -q "$2" "$1"' \
        "$status" "$tmp/out" "$esc"
else
    skip "csv on a terminal" "script(1) is not installed"
fi

# ---- name, table, wide, --no-headers ----
r rules list -o json
ids=$(python3 -c 'import json, sys; print("\n".join(o["id"] for o in json.load(open(sys.argv[1]))))' "$tmp/out")
r rules list -o name
check "-o name: the ids, one a line, in the list's order" sh -c '[ "$(cat "$0")" = "$1" ]' \
    "$tmp/out" "$ids"
r rules get "$A" -o name
check "get -o name: the id" sh -c '[ "$(cat "$0")" = "$1" ]' "$tmp/out" "$A"
r rules list
check "the table: header and four rows" sh -c 'head -n 1 "$0" | grep -q "^ID  *STATE  *POLICY  *ACTION  *CIDR  *DESCRIPTION$" &&
    [ "$(wc -l <"$0")" -eq 5 ]' "$tmp/out"
r rules list -o wide
check "-o wide: every field as a column" sh -c 'head -n 1 "$0" |
    grep -q "^ID  *STATE  *POLICY  *ACTION  *CIDR  *DESCRIPTION  *METADATA  *CREATED_AT  *URI  *POLICY_URI  *ERROR$"' "$tmp/out"
r creds list -o wide
check "creds -o wide: owner, ACL, metadata, times" sh -c 'head -n 1 "$0" |
    grep -q "^ID  *STATE  *OWNER  *DESCRIPTION  *ACL  *METADATA  *CREATED_AT  *URI  *ERROR$"' "$tmp/out"
for f in table wide; do
    r rules list -o $f --no-headers
    check "-o $f --no-headers: rows only" sh -c '! grep -q "^ID " "$0" && [ "$(wc -l <"$0")" -eq 4 ] &&
        head -n 1 "$0" | grep -q "^local_"' "$tmp/out"
done
r rules get "$A" -o table
check "get -o table: one row under the header" sh -c '[ "$(wc -l <"$0")" -eq 2 ]' "$tmp/out"

# ---- --sort and --limit ----
cidrs() { awk 'NR > 1 { print $5 }' "$tmp/out" | tr '\n' ' '; }
r rules list --sort cidr
check "--sort cidr: address order (IPv4 first, shorter prefix first)" \
    sh -c '[ "$0" = "9.0.0.0/8 10.0.0.0/8 10.1.0.0/16 2001:db8::/32 " ]' "$(cidrs)"
r rules list --sort cidr:desc
check "--sort cidr:desc: the other way" \
    sh -c '[ "$0" = "2001:db8::/32 10.1.0.0/16 10.0.0.0/8 9.0.0.0/8 " ]' "$(cidrs)"
r rules list --sort cidr --limit 2
check "--sort cidr --limit 2: the first two in that order" \
    sh -c '[ "$0" = "9.0.0.0/8 10.0.0.0/8 " ]' "$(cidrs)"
r rules list --sort cidr:desc --limit 3 -o json
check "--sort cidr:desc --limit 3 -o json" \
    py '[o["cidr"] for o in j] == ["2001:db8::/32", "10.1.0.0/16", "10.0.0.0/8"]'
r rules list --sort policy -o json
check "--sort policy: by policy, then id" \
    py '([o["ip_policy"]["id"] for o in j] == ["ipp_a", "ipp_a", "ipp_b", "ipp_b"] and
         [o["id"] for o in j[:2]] == sorted(o["id"] for o in j[:2]))'
r rules list --sort action:desc -o json
check "--sort action:desc: deny first" py '[o["action"] for o in j] == ["deny", "deny", "allow", "allow"]'
r rules list --limit 1 --policy ipp_b --sort cidr -o name
check "--limit with --policy and --sort" sh -c '[ "$(wc -l <"$0")" -eq 1 ]' "$tmp/out"
r creds create --description alpha
r creds list --sort description -o json
check "creds --sort description" py '[o["description"] for o in j] == ["alpha", "web"]'
r creds list --sort description:desc --limit 1 -o json
check "creds --sort description:desc --limit 1" py '[o["description"] for o in j] == ["web"]'

# ---- refusals: exit 2, naming what is valid ----
r rules list --sort frob
check "--sort frob: refused, the rules' orders listed" \
    refused 2 "'frob' is not an order of rules: one of id, policy, cidr, action, state"
r creds list --sort cidr
check "creds --sort cidr: refused, the credentials' orders listed" \
    refused 2 "one of id, state, description"
r rules list --sort cidr:up
check "--sort cidr:up: refused" refused 2 ":desc"
for bad in 0 -1 abc 1.5 ''; do
    r rules list --limit "$bad"
    check "--limit '$bad': refused" refused 2 "give a whole number above 0"
done
r rules list -o xml
check "-o xml: refused, the formats listed" refused 2 "one of table, wide, json, yaml, name, csv"
r rules list --json -o csv
check "--json with -o csv: refused" refused 2 "not both"
r rules get "$A" --sort cidr
check "get takes no --sort" refused 2 "unknown option '--sort'"
r rules list -o
check "-o without a value: refused" refused 2 "needs a value"

# ---- plan --detailed-exitcode ----
r plan --detailed-exitcode
check "plan --detailed-exitcode with changes queued: 2" status_is 2
r plan
check "plan without it: 0, as before" status_is 0
r plan --json --detailed-exitcode
check "plan --json --detailed-exitcode: 2, and the JSON" sh -c '[ "$0" -eq 2 ] && grep -q "\"action\": \"+\"" "$1"' \
    "$status" "$tmp/out"
run --db "$tmp/empty.db" rules list >/dev/null 2>&1 || "$RAMPART" --db "$tmp/empty.db" \
    rules create --cidr 10.0.0.0/8 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a --action allow \
    >/dev/null 2>&1 && "$RAMPART" --db "$tmp/empty.db" rules delete \
    "$("$RAMPART" --db "$tmp/empty.db" rules list -o name)" >/dev/null 2>&1
run --db "$tmp/empty.db" plan --detailed-exitcode
check "plan --detailed-exitcode, nothing to do: 0" \
    sh -c '[ "$0" -eq 0 ] && grep -q "Nothing to do" "$1"' "$status" "$tmp/out"
run --db "$tmp/empty.db" plan
check "plan, nothing to do: still the requests (the listing) and their time" \
    out_has "^Requests: 0 (0 POST, 0 DELETE, 0 PATCH, 0 GET), then one listing of about [0-9]* pages: about [0-9]*s at the budget's pace"
RAMPART_RATE=0 run --db "$tmp/empty.db" plan
check "plan, unpaced (rate 0): says so" out_has "^Requests: 0 .*: unpaced (rate 0)"
r plan
check "plan: the requests and their time at the budget's pace" \
    out_has "^Requests: 10 (6 POST, 0 DELETE, 2 PATCH, 2 GET), then one listing of about 2 pages: about [0-9]*s at the budget's pace (1.6 req/s)\.$"
r plan -o json
check "plan -o json: the items, counts and requests as fields" py \
    'len(j["items"]) == 6 and j["items"][0]["action"] == "+" and j["counts"]["create"] == 6 and j["requests"] == {"total": 10, "post": 6, "delete": 0, "patch": 2, "get": 2} and j["listings"] == 1 and j["listing_pages"] == 2 and j["pace_per_s"] > 0 and j["budget_s"] > 0'
RAMPART_RATE=0 r plan --json
check "plan --json, unpaced: budget_s null" py 'j["pace_per_s"] == 0 and j["budget_s"] is None'
r plan -o yaml --detailed-exitcode
check "plan -o yaml --detailed-exitcode: 2, YAML" \
    sh -c '[ "$0" -eq 2 ] && grep -q "^requests:" "$1" && grep -q "^- action:" "$1"' "$status" "$tmp/out"
r plan -o csv
check "plan -o csv: refused, naming what it prints" refused 2 "plan prints one of table, json, yaml"
r plan -o csv --detailed-exitcode
check "plan -o csv --detailed-exitcode: 1, as every usage error" refused 1 "plan prints one of"
r plan --json -o yaml
check "plan --json -o yaml: refused" refused 2 "not both"
r __complete values plan -o
check "__complete values plan -o: table, json, yaml (and csv, for --impact)" sh -c '[ "$(tr "\n" " " <"$0")" = "table json yaml csv " ]' "$tmp/out"
r plan --frob --detailed-exitcode
check "plan --detailed-exitcode with a usage error: 1" refused 1 "unknown option"
echo "not a cache" >"$tmp/notacache.db"
chmod 600 "$tmp/notacache.db"
run --db "$tmp/notacache.db" plan --detailed-exitcode
check "plan --detailed-exitcode on a file that is no cache: 1" status_is 1
RAMPART_CONFIG="$tmp/nope" run --db "$db" plan --detailed-exitcode
check "plan --detailed-exitcode with a broken config: 1" refused 1 "$tmp/nope"
RAMPART_CONFIG="$tmp/nope" run --db "$db" plan
check "plan with a broken config, no flag: 2 as before" refused 2 "$tmp/nope"

# ---- __complete: the values, silent on errors ----
r __complete rule-id local_
check "__complete rule-id: the rules' ids" sh -c '[ "$(sort "$0")" = "$(echo "$1" | sort)" ]' "$tmp/out" "$ids"
r __complete --policy ipp_b cidr 1
check "__complete --policy cidr: that policy's" sh -c '[ "$(cat "$0")" = "10.1.0.0/16" ]' "$tmp/out"
r __complete frob x
check "__complete of an unknown kind: nothing, 0" sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ] && [ ! -s "$2" ]' \
    "$status" "$tmp/out" "$tmp/err"
run --db "$tmp/none/no.db" __complete rule-id ""
check "__complete with no cache: nothing, 0, no file made" sh -c \
    '[ "$0" -eq 0 ] && [ ! -s "$1" ] && [ ! -s "$2" ] && [ ! -e "$3" ]' \
    "$status" "$tmp/out" "$tmp/err" "$tmp/none"
RAMPART_CONFIG="$tmp/nope" run --db "$db" __complete rule-id ""
check "__complete with a broken config: nothing, 0" sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ] && [ ! -s "$2" ]' \
    "$status" "$tmp/out" "$tmp/err"

run --help
check "--help names RAMPART_POLICY, the setting that fills a required --policy" \
    sh -c 'grep -q "^RAMPART_POLICY (or" "$0" && grep -q "check use without --policy" "$0"' \
    "$tmp/out"

# ---- __complete options: what each command takes, from its own parser's table ----
r __complete options
"$RAMPART" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' >"$tmp/want"
check "__complete options: the overview's commands" cmp -s "$tmp/out" "$tmp/want"
r __complete options rules
check "__complete options rules: its subcommands" sh -c \
    '[ "$(tr "\n" " " <"$0")" = "create update resolve list get delete import export retry discard " ]' "$tmp/out"
r __complete options rules list
check "... a command's options, '=' on those that take a value" sh -c \
    'grep -qx -e "-o=" "$0" && grep -qx -e "--sort=" "$0" && grep -qx -e "--no-headers" "$0" &&
     grep -qx -e "--db=" "$0" && grep -qx -e "--help" "$0"' "$tmp/out"
r __complete options rules update
check "... update offers the fields it changes, never the fixed ones" sh -c \
    'grep -qx -e "--cidr=" "$0" && ! grep -q -e "--policy" -e "--action" "$0"' "$tmp/out"
r rules update local_x --action deny
check "... which it still refuses with the reason" refused 2 "action cannot be changed"
r __complete options rules frob
check "__complete options of unknown words: nothing, 0" sh -c \
    '[ "$0" -eq 0 ] && [ ! -s "$1" ] && [ ! -s "$2" ]' "$status" "$tmp/out" "$tmp/err"
RAMPART_CONFIG="$tmp/nope" run __complete options plan
check "__complete options with a broken config: still the options" sh -c \
    'grep -qx -e "--detailed-exitcode" "$0"' "$tmp/out"
# ---- __complete values: an option's fixed set, from the table that checks it ----
r __complete values rules list --sort
check "__complete values --sort: the rules' orders, each also :desc" sh -c \
    '[ "$(tr "\n" " " <"$0")" = "id id:desc policy policy:desc cidr cidr:desc action action:desc state state:desc " ]' "$tmp/out"
r __complete values creds list --sort
check "... the credentials' own orders" sh -c \
    '[ "$(tr "\n" " " <"$0")" = "id id:desc state state:desc description description:desc " ]' "$tmp/out"
r __complete values rules create --action
check "__complete values --action: allow, deny" sh -c '[ "$(tr "\n" " " <"$0")" = "allow deny " ]' "$tmp/out"
# Each value offered is one the command takes, and -o and --output are one option.
refused_values=""
for v in $("$RAMPART" __complete values rules list --sort); do
    "$RAMPART" --db "$db" rules list --sort "$v" >/dev/null 2>&1 || refused_values="$refused_values --sort $v;"
done
for v in $("$RAMPART" __complete values creds list --sort); do
    "$RAMPART" --db "$db" creds list --sort "$v" >/dev/null 2>&1 || refused_values="$refused_values creds --sort $v;"
done
for v in $("$RAMPART" __complete values rules get -o); do
    "$RAMPART" --db "$db" rules list -o "$v" >/dev/null 2>&1 || refused_values="$refused_values -o $v;"
done
for v in $("$RAMPART" __complete values export --format); do
    all=""
    [ "$v" = nftables ] && all=--all-ports
    "$RAMPART" --db "$db" export --policy ipp_a --format "$v" $all >/dev/null 2>&1 ||
        refused_values="$refused_values --format $v;"
done
echo "$refused_values" >"$tmp/out"
check "every value offered (--sort, -o, --format) is accepted by its command" [ -z "$refused_values" ]
check "... and there is one of each format" sh -c \
    '[ "$("$0" __complete values rules list -o | wc -l)" -eq 6 ] && [ "$("$0" __complete values export --format | wc -l)" -eq 6 ]' \
    "$RAMPART"
r __complete values rules list --output
check "... --output is -o" sh -c '[ "$(tr "\n" " " <"$0")" = "table wide json yaml name csv " ]' "$tmp/out"
r __complete values rules list --filter
check "__complete values of an option that takes any value: nothing, 0" sh -c \
    '[ "$0" -eq 0 ] && [ ! -s "$1" ] && [ ! -s "$2" ]' "$status" "$tmp/out" "$tmp/err"
r __complete values export --output
check "... export's --output (a file): nothing" sh -c '[ ! -s "$0" ]' "$tmp/out"
r __complete values rules --sort
check "... a group, no subcommand: nothing" sh -c '[ ! -s "$0" ] && [ ! -s "$1" ]' "$tmp/out" "$tmp/err"
r __complete values frob --sort
check "... unknown words: nothing, 0" sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ] && [ ! -s "$2" ]' \
    "$status" "$tmp/out" "$tmp/err"
check "the completion scripts hold no list of values" sh -c \
    '! grep -n -e yaml -e nftables -e "allow deny" -e ":desc" "$0" "$1"' \
    "$root/assets/rampart.bash-completion" "$root/assets/_rampart"

# ---- bash ----
comp="$root/assets/rampart.bash-completion"
# bash_complete WORD...: what the completion offers for the last word, sorted.
bash_complete() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rampart
             printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" 2>&1 | sort
}
offers() { # offers WANTED WORD...: the offer is exactly WANTED (words, any order)
    # shellcheck disable=SC2086 # WANTED's words
    want=$(printf '%s\n' $1 | sort)
    shift
    bash_complete "$@" >"$tmp/out"
    [ "$(cat "$tmp/out")" = "$want" ]
}
offers_has() { # offers_has WORD WORD...: the offer holds WORD
    want=$1
    shift
    bash_complete "$@" >"$tmp/out"
    grep -qx -e "$want" "$tmp/out"
}
check "bash: rules get <TAB> offers the rule ids" offers "$ids" "$RAMPART" --db "$db" rules get ""
check "bash: --db=PATH is honoured too" offers "$A" "$RAMPART" "--db" "=" "$db" rules get "$A"
check "bash: creds token <TAB>: the credentials' ids" \
    offers_has "$C" "$RAMPART" --db "$db" creds token ""
check "bash: --policy <TAB>: the policies" offers "ipp_a ipp_b" "$RAMPART" --db "$db" rules list --policy ""
check "bash: check <TAB>: the policies" offers "ipp_a ipp_b" "$RAMPART" --db "$db" check ""
check "bash: --filter 10.<TAB>: cidrs" offers "10.0.0.0/8 10.1.0.0/16" "$RAMPART" --db "$db" rules list --filter 10.
check "bash: --cidr 1 with --policy ipp_b: that policy's" \
    offers "10.1.0.0/16" "$RAMPART" --db "$db" rules create --policy ipp_b --cidr 1
# bash splits 2001:db8: at each ':'; the completion joins the word and offers what
# follows the last ':' (what bash replaces).
check "bash: an IPv6 prefix split at ':' is one word" \
    offers ":/32" "$RAMPART" --db "$db" rules list --filter 2001 : db8 :
check "bash: -o <TAB>: the formats" offers "table wide json yaml name csv" "$RAMPART" rules list -o ""
check "bash: --sort <TAB> for rules" \
    offers "id id:desc policy policy:desc cidr cidr:desc action action:desc state state:desc" \
    "$RAMPART" rules list --sort ""
check "bash: --sort c<TAB> for credentials: none (no cidr order)" offers "" "$RAMPART" creds list --sort c
check "bash: --action <TAB>" offers "allow deny" "$RAMPART" rules create --action ""
check "bash: apply --action a<TAB>" offers "allow" "$RAMPART" apply --action a
check "bash: export --format <TAB>" offers "nftables nginx iptables ip6tables json csv" \
    "$RAMPART" export --format ""
check "bash: --profile <TAB> is not a fixed set: the profiles" offers "default" "$RAMPART" --profile ""
check "bash: export --output <TAB> is still a file" \
    offers_has "$tmp/cache.db" "$RAMPART" export --output "$tmp/cache.d"
bash_complete "$RAMPART" rules list -- >"$tmp/out"
check "bash: rules list options: -o, --output, --no-headers, --sort, --limit" sh -c \
    'for o in --output --no-headers --sort --limit --json --policy --filter; do grep -qx -e "$o" "$0" || exit 1; done' "$tmp/out"
bash_complete "$RAMPART" rules update x -- >"$tmp/out"
check "bash: rules update --<TAB>: never a field fixed at creation" sh -c \
    'grep -qx -e --cidr "$0" && ! grep -q -e --action -e --policy "$0"' "$tmp/out"
bash_complete "$RAMPART" plan --d >"$tmp/out"
check "bash: plan --detailed-exitcode" sh -c 'grep -qx -e --detailed-exitcode "$0"' "$tmp/out"
check "bash: no cache: nothing, quietly" offers "" "$RAMPART" --db "$tmp/none/no.db" rules get ""
# --sandbox: its own cache beside the default one (made here directly, no server).
run --db "$XDG_DATA_HOME/rampart/sandbox/cache.db" rules create --cidr 192.0.2.0/24 \
    --policy ipp_sandbox --action deny
check "bash: --sandbox completes from the sandbox's cache" offers "ipp_sandbox" "$RAMPART" --sandbox rules list --policy ""
check "bash: --sandbox starts no server (it would write its log)" sh -c '[ ! -e "$0" ]' \
    "$XDG_DATA_HOME/rampart/sandbox/serve-api.log"

# ---- zsh ----
if command -v zsh >/dev/null 2>&1; then
    zcomp="$root/assets/_rampart"
    # zsh_complete WORD...: the completion function's offer for the last word (its
    # candidates, before zsh's own prefix matching), sorted; "files" for files.
    zsh_complete() {
        zsh -f -c '. "$1"; shift; words=("$@"); CURRENT=$#; _rampart_candidates
                   [[ -n $_rampart_files ]] && print files; (( $#reply )) && print -rl -- $reply' _ "$zcomp" "$@" 2>&1 | sort
    }
    zsh_complete "$RAMPART" --db "$db" rules get "" >"$tmp/out"
    check "zsh: rules get <TAB> offers the rule ids" sh -c '[ "$(cat "$0")" = "$(echo "$1" | sort)" ]' \
        "$tmp/out" "$ids"
    zsh_complete "$RAMPART" --db "$db" rules list --filter 2001:db8: >"$tmp/out"
    check "zsh: an IPv6 prefix" sh -c '[ "$(cat "$0")" = "2001:db8::/32" ]' "$tmp/out"
    zsh_complete "$RAMPART" --db "$db" rules list --policy "" >"$tmp/out"
    check "zsh: --policy: the policies" sh -c '[ "$(cat "$0" | tr "\n" " ")" = "ipp_a ipp_b " ]' "$tmp/out"
    zsh_complete "$RAMPART" --sandbox check "" >"$tmp/out"
    check "zsh: --sandbox: the sandbox's cache" sh -c '[ "$(cat "$0")" = "ipp_sandbox" ]' "$tmp/out"
    zsh_complete "$RAMPART" rules list -o "" >"$tmp/out"
    check "zsh: -o: the formats" sh -c '[ "$(cat "$0" | tr "\n" " ")" = "csv json name table wide yaml " ]' "$tmp/out"
    zsh_complete "$RAMPART" creds list --sort "" >"$tmp/out"
    check "zsh: --sort: the credentials' orders" sh -c \
        '[ "$(cat "$0" | tr "\n" " ")" = "description description:desc id id:desc state state:desc " ]' "$tmp/out"
    zsh_complete "$RAMPART" export --format "" >"$tmp/out"
    check "zsh: --format: the formats" sh -c \
        '[ "$(cat "$0")" = "$(printf "%s\n" nftables nginx iptables ip6tables json csv | sort)" ]' "$tmp/out"
    zsh_complete "$RAMPART" export --output "" >"$tmp/out"
    check "zsh: export --output: files" sh -c '[ "$(cat "$0")" = files ]' "$tmp/out"
    zsh_complete "$RAMPART" apply "" >"$tmp/out"
    check "zsh: apply FILE: files" sh -c '[ "$(cat "$0")" = files ]' "$tmp/out"
    # Every command and option in both completions: docs_agree.sh.

    # A real TAB: zsh with compinit finds _rampart on its $fpath and completes.
    if command -v tmux >/dev/null 2>&1; then
        . "$here/../tui/lib.sh"
        mkdir -p "$tmp/fpath" "$tmp/bin"
        cp "$zcomp" "$tmp/fpath/_rampart"
        ln -s "$RAMPART" "$tmp/bin/rampart"
        tui_start 100x10 xterm "env PATH=$tmp/bin:$PATH RAMPART_DB=$db zsh -f -i"
        # Only the completion system's own directories beside ours: compinit reads
        # every directory of $fpath, seconds for all of a distribution's.
        tui_type "fpath=($tmp/fpath \${(M)fpath:#*/Completion} \${(M)fpath:#*/Completion/(Base|Unix)})"
        # (the prompt is spelt so the typed line does not show it)
        tui_type "; autoload -Uz compinit; compinit -u -D; PS1='zsh''-ready> '"
        tui_keys Enter
        tui_wait "zsh-ready>" >/dev/null
        tui_type "rampart rules li"
        tui_keys Tab
        tui_type "--so"
        tui_keys Tab
        # (tmux drops a line's trailing spaces: the space after a completed word)
        check "zsh TAB: rules li<TAB> --so<TAB> is 'rules list --sort'" \
            tui_wait "zsh-ready> rampart rules list --sort"
        tui_keys C-u
        tui_type "rampart rules get ${A%??}"
        tui_keys Tab
        check "zsh TAB: an id from the cache" tui_wait "zsh-ready> rampart rules get $A"
        tui_stop
    else
        skip "zsh TAB in a terminal" "tmux is not installed"
    fi
else
    skip "zsh completion" "zsh is not installed"
fi
checks_done
exit 0
