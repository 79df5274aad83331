#!/bin/sh
# `rampart rules|creds update` and `resolve`: edits in place over a real database
# file, then against a real serve-api over loopback (the server is the witness).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
R1=ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01
R2=ipr_2VhYfCwqPkX0n4sF5nYfW3eJc02
R3=ipr_2VhYfCwqPkX0n4sF5nYfW3eJc03

# json EXPR: EXPR (Python, over `d`, the JSON document in $tmp/out) holds.
json() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$tmp/out" "$1"
}
if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is missing (the JSON checks need it)"
    exit 1
fi

# ---- offline: one cache file, rows synced by an import ----

cat >"$tmp/seed.json" <<JSON
[{"id": "$R1", "cidr": "172.16.0.0/12", "ip_policy": {"id": "$P1"}, "action": "deny",
  "description": "from the api"},
 {"id": "$R2", "cidr": "192.168.0.0/16", "ip_policy": {"id": "$P1"}, "action": "allow",
  "description": "two", "metadata": "m2"},
 {"id": "$R3", "cidr": "10.20.0.0/16", "ip_policy": {"id": "$P1"}, "action": "allow"}]
JSON
run rules import "$tmp/seed.json"
check "seed: three synced rules" out_has "3 already synced"

# A row not created remotely yet: its queued create changes.
run rules create --cidr 10.0.0.0/8 --policy $P1 --action allow --description office
new=$(sed -n 's/^created rule \(local_[0-9A-Za-z]*\) .*/\1/p' "$tmp/out")
run rules update "$new" --description lab --cidr 10.0.0.0/9
check "update of a new rule: exit 0" status_is 0
check "update of a new rule: the queued create changed" \
    out_has "rule $new: the queued create changed (cidr, description)"
run rules get "$new" --json
check "... the row has the new values, still new" \
    json 'd["state"] == "new" and d["cidr"] == "10.0.0.0/9" and d["description"] == "lab"'
check "... and no edit (a create has no base)" json '"edit" not in d'
run rules update "$new" --metadata x --json
check "update --json of a new rule: result create_changed" \
    json 'd["result"] == "create_changed" and d["id"] == "'"$new"'" and d["metadata"] == "x"'

# A synced row: edited, with base and local.
run rules update $R1 --cidr 172.16.0.0/16
check "update of a synced rule: edited, PATCH pending" \
    out_has "rule $R1 edited (cidr): the next sync sends it (PATCH pending)"
run rules get $R1 --json
check "get --json: state edited, the new cidr" \
    json 'd["state"] == "edited" and d["cidr"] == "172.16.0.0/16"'
check "get --json: edit has base and local, no remote, no conflict" \
    json 'd["edit"]["fields"]["cidr"] == {"base": "172.16.0.0/12", "local": "172.16.0.0/16",
          "remote": None} and d["edit"]["conflict"] is None'
check "get --json: only the edited field" json 'list(d["edit"]["fields"]) == ["cidr"]'
run rules get $R1
check "get: the edit as base -> local" out_has "^edit  *cidr: 172.16.0.0/12 -> 172.16.0.0/16"
check "get: state edited" out_has "^state  *edited"
run rules list
check "list: the state edited" out_has "^$R1  *edited "
run plan
check "plan: the edit is a change (~)" out_has "^~ rule $R1"

# Back to the base: synced again.
run rules update $R1 --cidr 172.16.0.0/12 --json
check "update back to the base: result unchanged" json 'd["result"] == "unchanged"'
check "... synced, no edit left" json 'd["state"] == "synced" and "edit" not in d'
run rules update $R1 --description "new words"
run rules update $R1 --description "from the api"
check "update back to the base: says so" out_has "back to the remote's values"
run rules get $R1
check "... and get shows no edit" out_lacks "^edit"

# Discard undoes an edit.
run rules update $R1 --description changed --metadata meta
run rules discard $R1
check "discard of an edited rule: the edit dropped" out_has "$R1: edit discarded"
run rules get $R1 --json
check "... back to the remote's values, synced" json 'd["state"] == "synced" and
    d["description"] == "from the api" and "metadata" not in d and "edit" not in d'

# Delete after an edit is a delete.
run rules update $R3 --description doomed
run rules delete $R3
check "delete of an edited rule: marked for deletion" out_has "$R3: marked for deletion"
run rules get $R3 --json
check "... deleting, its edit gone" json 'd["state"] == "deleting" and "edit" not in d'
run rules update $R3 --description again
check "update of a rule being deleted: refused (2), names the state" refused 2 "being deleted"

# Bad values: refused with create's message, nothing changed.
run rules create --cidr 10.0.0.1/8 --policy $P1 --action deny
cp "$tmp/err" "$tmp/create.err"
run rules update $R2 --cidr 10.0.0.1/8
check "bad cidr: refused (2) with the fix" refused 2 "host bits set: did you mean 10.0.0.0/8?"
check "... the same message as create" cmp -s "$tmp/err" "$tmp/create.err"
long=$(printf 'x%.0s' $(seq 256))
run rules create --cidr 11.0.0.0/8 --policy $P1 --action deny --description "$long"
cp "$tmp/err" "$tmp/create.err"
run rules update $R2 --description "$long"
check "256-byte description: refused (2), the same message as create" \
    sh -c '[ "$0" -eq 2 ] && cmp -s "$1" "$2"' "$status" "$tmp/err" "$tmp/create.err"
run rules update $R2 --cidr 172.16.0.0/12
check "a cidr another live rule holds: refused (2), names it" refused 2 "$R1"
run rules get $R2 --json
check "... nothing changed" json 'd["state"] == "synced" and d["cidr"] == "192.168.0.0/16"
    and d["description"] == "two"'

# Fields that never change, and an update with none.
run rules update $R2 --action deny
check "--action: refused (2), names the field" refused 2 "action cannot be changed after creation"
run rules update $R2 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b --description x
check "--policy: refused (2), names the field" refused 2 "policy cannot be changed after creation"
run rules get $R2 --json
check "... nothing changed" json 'd["state"] == "synced" and d["description"] == "two"'
run rules update $R2
check "no field: refused (2), lists the fields" \
    refused 2 "nothing to change: give --cidr, --description or --metadata"
run rules update --description x
check "no id: usage (2)" refused 2 "missing argument"
run rules update ipr_doesnotexist --description x
check "unknown id: exit 3" refused 3 "ipr_doesnotexist"

# An empty value clears a field.
run rules update $R2 --description "" --json
check "--description \"\": cleared (left out of the object)" \
    json 'd["state"] == "edited" and "description" not in d'
check "... the edit: base two, local empty" \
    json 'd["edit"]["fields"]["description"]["base"] == "two" and
          d["edit"]["fields"]["description"]["local"] == "" and d["result"] == "edited"'
run rules get $R2
check "get: an empty value shown as \"\"" out_has '^edit  *description: two -> ""'

# resolve: usage and state.
run rules resolve $R2
check "resolve without a side: refused (2)" refused 2 "give --keep-local or --take-remote"
run rules resolve $R2 --keep-local --take-remote
check "resolve with both sides: refused (2)" refused 2 "exclude each other"
run rules resolve $R2 --keep-local
check "resolve of an edited rule: not a conflict (2)" refused 2 "not a conflict: nothing to resolve"
run rules resolve ipr_doesnotexist --take-remote
check "resolve of an unknown id: exit 3" refused 3 "ipr_doesnotexist"
run rules resolve --keep-local
check "resolve without an id: usage (2)" refused 2 "missing argument"

# Help and completion words.
run rules --help
check "rules --help lists update and resolve" sh -c 'grep -q "^  update " "$0" &&
    grep -q "^  resolve " "$0"' "$tmp/out"
run rules update --help
check "rules update --help: the options" out_has "--cidr CIDR"
run creds update --help
check "creds update --help: --acl" out_has "--acl RULE"
run creds resolve --help
check "creds resolve --help: the sides" out_has "--take-remote"

# Credentials offline.
run creds create --description web --acl bind:a.example.com
cnew=$(sed -n 's/^created credential \(local_[0-9A-Za-z]*\),.*/\1/p' "$tmp/out")
run creds update "$cnew" --acl bind:b.example.com --acl 'bind:*.c.example.com' --json
check "creds update --acl: the list replaced" \
    json 'd["acl"] == ["bind:b.example.com", "bind:*.c.example.com"] and d["result"] == "create_changed"'
run creds update "$cnew" --acl frob:x
check "creds update, a bad ACL rule: refused (2)" refused 2 "bind:"
run creds update "$cnew" --owner usr_2VhYfCwqPkX0n4sF5nYfW3eJb1a
check "creds update --owner: refused (2), names the field" refused 2 "owner cannot be changed"
run creds update "$cnew"
check "creds update with no field: lists the fields" \
    refused 2 "nothing to change: give --description, --acl or --metadata"
run creds update "$cnew" --acl ""
check "creds update --acl \"\": cleared" status_is 0
run creds get "$cnew" --json
check "... an empty ACL" json 'd["acl"] == []'
run creds discard "$cnew"

# ---- against serve-api: PATCH on sync, the token kept ----

start_server main || exit 1
A="$tmp/a.db"
token_sum() { "$RAMPART" --db "$A" creds token "$1" 2>/dev/null | sha256sum; }
server_get() { api GET "$1" >"$tmp/out"; }

# A queued create changed by update is created with the new values.
run --db "$A" rules create --cidr 10.1.0.0/16 --policy $P1 --action allow --description first
local_rule=$(sed -n 's/^created rule \(local_[0-9A-Za-z]*\) .*/\1/p' "$tmp/out")
run --db "$A" rules update "$local_rule" --description second --sync
check "update --sync of a new rule: exit 0" status_is 0
rule=$(server_ids ip_policy_rules | head -n 1)
server_get "/ip_policy_rules/$rule"
check "the server created it with the updated description" \
    json 'd["description"] == "second" and d["cidr"] == "10.1.0.0/16"'

# A synced rule edited with --sync: PATCHed.
run --db "$A" rules update "$rule" --cidr 10.2.0.0/16 --metadata m --sync --json
check "rules update --sync: exit 0" status_is 0
check "... synced afterwards, result edited" json 'd["state"] == "synced" and d["result"] == "edited"'
server_get "/ip_policy_rules/$rule"
check "the server has the new cidr and metadata" \
    json 'd["cidr"] == "10.2.0.0/16" and d["metadata"] == "m" and d["description"] == "second"'

# A credential: its ACL edited, the token kept.
"$RAMPART" --db "$A" creds create --description agent --acl bind:a.example.com --sync \
    >/dev/null 2>"$tmp/err"
cred=$(server_ids credentials | head -n 1)
before=$(token_sum "$cred")
# The token is compared by its digest and never printed (not even into $tmp/out).
check "the credential's token is held here" [ "$before" != "$(printf '' | sha256sum)" ]
run --db "$A" creds update "$cred" --acl bind:b.example.com --acl bind:env=prod
check "creds update of a synced credential: edited" out_has "credential $cred edited (acl)"
run --db "$A" creds get "$cred" --json
check "creds get --json: the ACL's base and local as arrays" \
    json 'd["edit"]["fields"]["acl"]["base"] == ["bind:a.example.com"] and
          d["edit"]["fields"]["acl"]["local"] == ["bind:b.example.com", "bind:env=prod"]'
check "... the token still held, unchanged" [ "$(token_sum "$cred")" = "$before" ]
run --db "$A" creds update "$cred" --description agent2 --sync
check "creds update --sync: exit 0" status_is 0
server_get "/credentials/$cred"
check "the server has the new ACL and description" \
    json 'd["acl"] == ["bind:b.example.com", "bind:env=prod"] and d["description"] == "agent2"'
check "... the token unchanged after the sync" [ "$(token_sum "$cred")" = "$before" ]
run --db "$A" creds get "$cred" --json
check "... and the row synced" json 'd["state"] == "synced" and "edit" not in d'
run --db "$A" creds update "$cred" --acl bind:z.example.com
run --db "$A" creds discard "$cred"
check "discard of an ACL edit: dropped" out_has "$cred: edit discarded"
run --db "$A" creds get "$cred" --json
check "... the ACL's rules back as the remote has them" \
    json 'd["acl"] == ["bind:b.example.com", "bind:env=prod"] and d["state"] == "synced"'
run --db "$A" creds update "$cred" --acl "" --sync
server_get "/credentials/$cred"
check "--acl \"\" --sync: the server's ACL is empty" json 'd["acl"] == []'
check "... the token unchanged" [ "$(token_sum "$cred")" = "$before" ]

# Deleted remotely while edited here: a conflict (gone), resolved.
run --db "$A" rules update "$rule" --description "edited here"
api DELETE "/ip_policy_rules/$rule" >/dev/null
run --db "$A" sync
run --db "$A" rules get "$rule" --json
check "PATCH of a rule deleted remotely: conflict gone" \
    json 'd["state"] == "conflict" and d["edit"]["conflict"] == "gone"'
run --db "$A" rules get "$rule"
check "get: the conflict and how to resolve it" sh -c 'grep -q "^conflict  *gone" "$0" &&
    grep -q "^resolve  *.* rules resolve '"$rule"' --keep-local|--take-remote" "$0"' "$tmp/out"
run --db "$A" plan
check "plan: the conflict needs attention (!)" out_has "^! rule $rule"
run --db "$A" rules resolve "$rule" --keep-local --json
check "resolve --keep-local of gone: a create again" \
    json 'd["state"] == "new" and d["result"] == "keep_local" and d["id"].startswith("local_")'
run --db "$A" sync
server_list ip_policy_rules description >"$tmp/out"
check "... the next sync created it with the local values" out_has "^edited here$"

# The remote changed a field edited here: a conflict (fields) after a pull.
rule=$(server_ids ip_policy_rules | head -n 1)
run --db "$A" rules update "$rule" --description "mine"
api PATCH "/ip_policy_rules/$rule" '{"description": "theirs"}' >/dev/null
run --db "$A" sync --pull-only
run --db "$A" rules get "$rule" --json
check "pull over an edit of the same field: conflict fields, with the remote value" \
    json 'd["state"] == "conflict" and d["edit"]["conflict"] == "fields" and
          d["edit"]["fields"]["description"]["local"] == "mine" and
          d["edit"]["fields"]["description"]["remote"] == "theirs"'
run --db "$A" rules get "$rule"
check "get: the remote's value beside the edit" out_has "^edit  *description: .* -> mine (remote: theirs)"
run --db "$A" rules resolve "$rule" --take-remote
check "resolve --take-remote: synced with the remote's value" \
    out_has "rule $rule: conflict resolved (take_remote): now synced"
run --db "$A" rules get "$rule" --json
check "... the remote's description" json 'd["description"] == "theirs" and "edit" not in d'
run --db "$A" rules update "$rule" --description "mine again"
api PATCH "/ip_policy_rules/$rule" '{"description": "theirs again"}' >/dev/null
run --db "$A" sync --pull-only
run --db "$A" rules resolve "$rule" --keep-local
check "resolve --keep-local: edited, sent by the next sync" \
    out_has "conflict resolved (keep_local): now edited: the next sync sends the edit"
run --db "$A" sync
server_get "/ip_policy_rules/$rule"
check "... the server has the local value" json 'd["description"] == "mine again"'
run --db "$A" rules update "$rule" --description "mine once more"
api PATCH "/ip_policy_rules/$rule" '{"description": "theirs once more"}' >/dev/null
run --db "$A" sync --pull-only
run --db "$A" rules discard "$rule"
check "discard of a conflict: the edit dropped" out_has "$rule: edit discarded"
run --db "$A" rules get "$rule" --json
check "... synced, the edit gone" json 'd["state"] == "synced" and "edit" not in d'
run --db "$A" sync --pull-only
run --db "$A" rules get "$rule" --json
check "... and the next pull brings the remote's value" \
    json 'd["state"] == "synced" and d["description"] == "theirs once more"'

# Deleted remotely, the remote's side taken: removed here.
run --db "$A" creds update "$cred" --description "gone soon"
api DELETE "/credentials/$cred" >/dev/null
run --db "$A" sync
run --db "$A" creds get "$cred"
check "creds get: a conflict gone, its edit and how to resolve it" sh -c '
    grep -q "^edit  *description: agent2 -> gone soon" "$0" &&
    grep -q "^conflict  *gone" "$0" && grep -q "creds resolve '"$cred"'" "$0"' "$tmp/out"
run --db "$A" creds resolve "$cred" --take-remote --json
check "creds resolve --take-remote --json of gone: removed" \
    json 'd == {"id": "'"$cred"'", "removed": True, "result": "take_remote"}'
run --db "$A" creds get "$cred"
check "... the credential is gone here" status_is 3

stop_server
checks_done
