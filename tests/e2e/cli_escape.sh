#!/bin/sh
# Text from the user, the cache, a file or the remote reaches the terminal escaped
# (termsafe): ESC, BEL, C1, bidi controls and bytes that are not UTF-8 show as
# \x1b, \x07, \u009b, \u202e, \xff in listings, details, the plan, errors that
# echo an argument, file names and the sync's lines; --json stays exact. Columns
# stay aligned: an escape takes as many columns as its characters.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is missing (the JSON and column checks need it)"
    exit 1
fi

P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
P2=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b
esc=$(printf '\033')
desc=$(printf 'evil\033]0;pwned\007\033[2J\342\200\256rev\302\233x\ttab')
meta=$(printf 'line1\nline2\033[31m')
export desc meta

# no_raw FILE...: none of ESC, BEL, C1 CSI, U+202E, U+2066, a lone 0xff.
no_raw() {
    for f in "$@"; do
        if grep -q "$esc" "$f" || grep -q "$(printf '\007')" "$f" ||
            grep -q "$(printf '\302\233')" "$f" || grep -q "$(printf '\342\200\256')" "$f" ||
            grep -q "$(printf '\342\201\246')" "$f" || LC_ALL=C grep -q "$(printf '\377')" "$f"
        then
            return 1
        fi
    done
}
both_safe() { no_raw "$tmp/out" "$tmp/err"; }

# ---- a description and metadata given on the command line ------------------------------------
run rules create --cidr 10.0.0.0/8 --policy $P1 --action allow --description "$desc" \
    --metadata "$meta"
check "create with ESC, BEL, U+202E, C1, a tab in the description: exit 0" status_is 0
check "create: its line is safe" both_safe
id=$(sed -n 's/^created rule \(local_[0-9A-Za-z]*\) .*/\1/p' "$tmp/out")

run rules list
check "list: nothing raw" both_safe
check "list: ESC, OSC and BEL shown as escapes" out_has 'evil\\x1b]0;pwned\\x07\\x1b\[2J'
check "list: U+202E, C1 and the tab shown as escapes" out_has '\\u202erev\\u009bx\\ttab'
run rules get "$id"
check "get: nothing raw" both_safe
check "get: the description escaped" out_has '^description  evil\\x1b]0;pwned\\x07'
check "get: the metadata's newline escaped, one line" out_has '^metadata     line1\\nline2\\x1b\[31m$'

exact_json() {
    python3 -c 'import json, os, sys
d = json.load(open(sys.argv[1]))
d = d[0] if isinstance(d, list) else d
sys.exit(0 if d["description"] == os.environ["desc"] and d["metadata"] == os.environ["meta"] else 1)' "$tmp/out"
}
run rules list --json
check "list --json: the description and metadata exact" exact_json
check "list --json: ESC as JSON's own \\u001b" out_has 'evil\\u001[bB]]0;pwned\\u0007'
run rules get "$id" --json
check "get --json: exact" exact_json

# ---- the user's own arguments echoed in errors ----------------------------------------------
run rules get "$(printf 'ipr_\033[2Jx')"
check "unknown id: exit 3, the id escaped" refused 3 'ipr_\\x1b\[2Jx'
check "unknown id: nothing raw" both_safe
run rules "$(printf 'frob\033[2J')"
check "unknown command: escaped" refused 2 "unknown command 'frob\\\\x1b\[2J'"
check "unknown command: nothing raw" both_safe
run rules list "$(printf -- '--bad\033[2J')"
check "unknown option: escaped" refused 2 "unknown option '--bad\\\\x1b\[2J'"
check "unknown option: nothing raw" both_safe
run "$(printf -- '--x\033]0;t\007')" status
check "unknown global option: escaped" refused 2 '\\x1b]0;t\\x07'
run "$(printf 'st\342\200\256atus')"
check "unknown command, bidi: escaped" refused 2 'st\\u202eatus'
run rules create --cidr "$(printf '10.0.0.0/8\033[2J')" --policy $P1 --action deny
check "bad cidr: refused, nothing raw" both_safe
run rules get "$(printf 'ipr_\377x')"
check "invalid UTF-8 in an argument: shown as \\xff" err_has 'ipr_\\xffx'
check "invalid UTF-8: nothing raw" both_safe
run rules import "$(printf 'no\033[2Jsuch.json')"
check "a file that does not open: its name escaped" refused 2 'cannot open no\\x1b\[2Jsuch.json'
run check $P1 "$(printf '10.0.0.1\033[2J')"
check "check: a bad address refused" refused 2 'address #1'
check "check: nothing raw" both_safe

# ---- file names ---------------------------------------------------------------------------
odd="$tmp/$(printf 'odd\033[2J\342\200\256name').db"
run --db "$odd" status
check "status: a database path with ESC and U+202E escaped" out_has 'odd\\x1b\[2J\\u202ename.db'
check "status: nothing raw" both_safe

# ---- credentials: the plan, alignment in display columns ----------------------------------
run creds create --description "$desc" --acl bind:a.example.com
run creds create --description "$(printf '\346\227\245\346\234\254 \033x')" --acl bind:b.example.com
run creds create --description plain --acl bind:c.example.com
run creds list
check "creds list: nothing raw" both_safe
aligned() {
    python3 -c 'import sys, unicodedata
cols = set()
for line in open(sys.argv[1], encoding="utf-8").read().splitlines()[1:]:
    at = line.find("bind:")
    cols.add(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line[:at]))
sys.exit(0 if len(cols) == 1 else 1)' "$tmp/out"
}
check "creds list: the ACL column lines up (escapes and wide characters counted)" aligned
run plan
check "plan: nothing raw" both_safe
check "plan: the description escaped" out_has 'evil\\x1b]0;pwned'

# ---- pulled from the remote, and the sync's own lines -------------------------------------
start_server pull || exit 1
db="$tmp/pull.db"
api POST /ip_policy_rules "{\"ip_policy_id\":\"$P2\",\"cidr\":\"10.9.0.0/16\",\"action\":\"deny\",\"description\":\"remote\\u001b[31mred\\u202e\\u2066\",\"metadata\":\"m\\u0007\"}" >/dev/null
run --db "$db" sync
check "sync pulls it" status_is 0
run --db "$db" rules list
check "pulled: nothing raw in the list" both_safe
check "pulled: shown escaped" out_has 'remote\\x1b\[31mred\\u202e\\u2066'
run --db "$db" rules list --json
check "pulled: --json keeps JSON's escape" out_has 'remote\\u001[bB]\[31mred'
run --db "$db" creds create --description "$desc" --sync
check "create --sync of a hostile description: the sync's lines are safe" both_safe
run --db "$db" sync --verbose
check "sync --verbose: nothing raw" both_safe

checks_done
exit 0
