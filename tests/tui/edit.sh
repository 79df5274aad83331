#!/bin/sh
# Edits in place from the console, headless (`rampart tui --headless SCRIPT`)
# against a real serve-api: 'e' on a synced rule opens its form pre-filled, the
# policy and action read-only; a new CIDR saved makes the row "edited" with its
# base kept (checked with the CLI); an invalid CIDR shows the create form's reason
# and saves nothing; a clash with another rule stays in the form under the CIDR; a
# credential's ACL edited keeps its token; a conflict (the same field changed here
# and on the server, then a sync) is resolved with 'R' (Take remote, Keep local).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

db="$tmp/edit.db"
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a

# play NAME [OPTIONS]: run the script $tmp/NAME.keys (from stdin) headless.
play() { headless_play "$db" "$@"; }
# The row of the table holding TEXT on screen N holds PATTERN too.
row_with() { grep -F -- "$2" "$tmp/screen.$1" | grep -F -q -- "$3"; }

# json EXPR: EXPR (Python, `d` the document) holds for the JSON in $tmp/out.
json() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$tmp/out" "$1"
}
if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is missing (the JSON checks need it)"
    exit 1
fi
rule_json() { run --db "$db" rules get "$1" --json; }
token_sum() { "$RAMPART" --db "$db" creds token "$1" 2>/dev/null | sha256sum; }

start_server edit || exit 1
run --db "$db" rules create --cidr 10.1.0.0/16 --policy "$policy" --action deny \
    --description first
run --db "$db" rules create --cidr 10.9.0.0/16 --policy "$policy" --action allow \
    --description other
"$RAMPART" --db "$db" creds create --description agent --acl bind:a.example.com \
    >/dev/null 2>"$tmp/err"
run --db "$db" sync
check "seed: synced" status_is 0
run --db "$db" rules list --json
rule=$(python3 -c 'import json,sys; print([r["id"] for r in json.load(open(sys.argv[1]))
    if r["cidr"] == "10.1.0.0/16"][0])' "$tmp/out")
cred=$(server_ids credentials | head -n 1)
check "seed: ids known" sh -c "[ -n '$rule' ] && [ -n '$cred' ]"

# ---- the token the CLI's sync brought comes up first, once ---------------------------
# (Left open, it would take the keys meant for the table below.)
play token <<EOF
dump
key <Enter>
dump
EOF
check "start: the token the CLI's sync brought comes up first" screen 1 "New token: $cred"
check "start: Enter closes it" no_screen 2 "New token"

# ---- the form of a synced rule: pre-filled, the fixed fields read-only -------------
play open <<EOF
key /
type $rule
key <Enter> e
dump
key <Tab>
dump
key <Tab> <Tab> <BTab> <BTab>
type zz
dump
key <Esc>
dump
EOF
check "open: exit 0" status_is 0
check "open: the filter holds that rule only" screen 1 "rows 1-1 of 1"
check "open: e opens the rule's edit form" screen 1 "Edit rule $rule"
check "open: pre-filled with its cidr" screen 1 "> CIDR          10.1.0.0/16"
check "open: its policy read-only" screen 1 "Policy        $policy  (read-only)"
check "open: its action read-only" screen 1 "Action        deny  (read-only)"
check "open: the description editable" screen 1 "Description   first"
check "open: Tab skips the policy and the action" screen 2 "> Description"
check "open: typing goes to an editable field, never to a fixed one" \
    screen 3 "> Description   firstzz"
check "open: ... the action as it was" screen 3 "Action        deny  (read-only)"
check "open: Esc saves nothing" screen 4 "cancelled: nothing saved"
rule_json "$rule"
check "open: the row untouched" json 'd["state"] == "synced" and d["cidr"] == "10.1.0.0/16"'

# ---- an invalid CIDR: the create form's reason, nothing saved ----------------------
play invalid <<EOF
key /
type $rule
key <Enter> e <C-u>
type 10.0.0.1/8
key <Enter>
dump
key <Esc>
EOF
check "invalid: the create form's reason under the field" \
    screen 1 "! host bits set: did you mean 10.0.0.0/8?"
check "invalid: the submit refused" screen 1 "not saved: fix the fields marked '!' first"
rule_json "$rule"
check "invalid: nothing saved" json 'd["state"] == "synced" and d["cidr"] == "10.1.0.0/16"'

# ---- a clash with another live rule: the store's refusal under the CIDR ---------------
play clash <<EOF
key /
type $rule
key <Enter> e <C-u>
type 10.9.0.0/16
key <Enter>
dump
key <Esc>
EOF
check "clash: the form stays open" screen 1 "Edit rule"
check "clash: the store's reason under the CIDR" screen 1 "! policy $policy already has"
check "clash: and as the form's message" screen 1 "! not saved: policy"
rule_json "$rule"
check "clash: nothing saved" json 'd["state"] == "synced" and d["cidr"] == "10.1.0.0/16"'

# ---- a new CIDR saved: edited, the base kept --------------------------------------------
play save <<EOF
key /
type $rule
key <Enter> e <C-u>
type 10.2.0.0/16
key <Enter>
dump
key <Enter>
dump
EOF
check "save: the status line says edited, sync pending" \
    screen 1 "rule 10.2.0.0/16 edited, sync pending: cidr"
check "save: the row shows the state edited" row_with 1 "10.2.0.0/16" "edited"
check "save: the details show base -> local" screen 2 "cidr         10.1.0.0/16 -> 10.2.0.0/16"
rule_json "$rule"
check "save: the CLI shows base and local" \
    json 'd["state"] == "edited" and d["edit"]["fields"]["cidr"]["base"] == "10.1.0.0/16" and
          d["edit"]["fields"]["cidr"]["local"] == "10.2.0.0/16"'
check "save: the policy and action unchanged" \
    json 'd["ip_policy"]["id"] == "'"$policy"'" and d["action"] == "deny"'

# ---- a state that refuses edits: no form ----------------------------------------------------
run --db "$db" rules create --cidr 10.5.0.0/16 --policy "$policy" --action deny
run --db "$db" sync
run --db "$db" rules list --json
gone=$(python3 -c 'import json,sys; print([r["id"] for r in json.load(open(sys.argv[1]))
    if r["cidr"] == "10.5.0.0/16"][0])' "$tmp/out")
run --db "$db" rules delete "$gone"
play deleting <<'EOF'
key /
type 10.5.0.0
key <Enter> e
dump
EOF
check "deleting: e refused in the status line" screen 1 "cannot edit rule $gone: it is being deleted"
check "deleting: no form" no_screen 1 "Edit rule"

# ---- read-only: e refused like the other writes ---------------------------------------------
play readonly --readonly <<'EOF'
key e
dump
key ?
dump
EOF
check "readonly: e refused" screen 1 "read-only console"
check "readonly: no form" no_screen 1 "Edit rule"
check "readonly: help hides e and R" \
    sh -c "! grep -q -e 'edit the row' -e 'resolve a conflict' '$tmp/screen.2'"

# ---- help lists e and R (a tall screen: the list is longer than 24 rows) ----------------------
play help <<'EOF'
resize 80x60
key ?
dump
EOF
check "help: e" screen 1 "edit the row"
check "help: R" screen 1 "resolve a conflict: keep local or take remote"

# ---- a credential's ACL: edited, its token kept ------------------------------------------------
before=$(token_sum "$cred")
check "cred: the token is held here" [ "$before" != "$(printf '' | sha256sum)" ]
play cred <<'EOF'
key 2 e
dump
key <Tab> <C-u>
type bind:b.example.com
key <Enter>
type bind:env=prod
key <Enter> <Enter>
dump
EOF
check "cred: its form, the ACL pre-filled" screen 1 "ACL rules     bind:a.example.com"
check "cred: the owner read-only" screen 1 "(read-only)"
check "cred: edited" screen 2 "edited, sync pending: acl"
check "cred: the row shows edited" row_with 2 "agent" "edited"
run --db "$db" creds get "$cred" --json
check "cred: the ACL's base and local" \
    json 'd["edit"]["fields"]["acl"]["base"] == ["bind:a.example.com"] and
          d["edit"]["fields"]["acl"]["local"] == ["bind:b.example.com", "bind:env=prod"]'
check "cred: the token unchanged" [ "$(token_sum "$cred")" = "$before" ]

# ---- a conflict: the same field changed here and on the server -----------------------------------
# Needs the sync's PATCH pass (sync/engine_edit.c): the edited cidr is sent first.
run --db "$db" sync
api PATCH "/ip_policy_rules/$rule" '{"description": "theirs"}' >/dev/null
play conflict_local <<EOF
key /
type $rule
key <Enter> e <Tab> <C-u>
type mine
key <Enter>
EOF
run --db "$db" sync --pull-only
rule_json "$rule"
check "conflict: made (the description here and on the server)" \
    json 'd["state"] == "conflict" and d["edit"]["fields"]["description"]["remote"] == "theirs"'
play pending <<EOF
key 3
dump
key R
dump
key <Esc>
dump
EOF
check "pending: the conflict needs attention" row_with 1 "! rule" "conflict"
check "pending: the reason is the plan's (both values)" row_with 1 "! rule" "description: local"
check "pending: R opens the dialog there too" screen 2 "Resolve the conflict of rule $rule"
check "pending: Esc cancels" screen 3 "cancelled: nothing changed"
play resolve_take <<EOF
key /
type $rule
key <Enter>
dump
key R
dump
key <Left>
dump
key <Enter>
dump
EOF
check "conflict: the row shows the state conflict" row_with 1 "10.2.0.0/16" "conflict"
check "conflict: its note says how to resolve" screen 1 "! conflict (R resolves it): "
check "resolve: the dialog" screen 2 "Resolve the conflict of rule $rule"
check "resolve: both values" screen 2 "description: local mine, remote theirs"
check "resolve: the choices" sh -c "grep -q -F '[ Keep local ]' '$tmp/screen.2' &&
    grep -q -F '[ Take remote ]' '$tmp/screen.2'"
check "resolve: Cancel first" screen 2 ">[ Cancel ]<"
check "resolve: Left to Take remote" screen 3 ">[ Take remote ]<"
check "resolve: taken" screen 4 "resolved: took the remote's values"
rule_json "$rule"
check "resolve: the remote's description" json 'd["description"] == "theirs" and "edit" not in d'

api PATCH "/ip_policy_rules/$rule" '{"description": "theirs again"}' >/dev/null
run --db "$db" rules update "$rule" --description "mine again"
run --db "$db" sync --pull-only
play resolve_keep <<EOF
key /
type $rule
key <Enter> R k
dump
EOF
check "resolve: k keeps the local values" screen 1 "resolved: kept the local values"
rule_json "$rule"
check "resolve: kept, edited again" json 'd["state"] == "edited" and d["description"] == "mine again"'
play resolve_none <<EOF
key /
type $rule
key <Enter> R
dump
EOF
check "resolve: R on a row that is no conflict says so" screen 1 "'R' resolves a conflict"
run --db "$db" sync
server_has() { api GET "/ip_policy_rules/$rule" | grep -q "$1"; }
check "resolve: the next sync sends the kept value" server_has "mine again"
stop_server
checks_done
exit 0
