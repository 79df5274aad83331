#!/bin/sh
# The console's forms and dialogs, driven through tmux at 80x24 with the real
# binary: a rule with an invalid CIDR (the reason shows, nothing is saved) then a
# valid one; a credential with ACL rules; mark and delete with a confirmation (No,
# then Yes); --readonly refuses 'c' and 'd'. The database is checked with the CLI
# on the same file while the console is open.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

db="$tmp/forms.db"
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a

# rules_json: the cache's rules as JSON into $tmp/out.
rules_json() { run --db "$db" rules list --json; }
creds_json() { run --db "$db" creds list --json; }
rule_count() { rules_json && [ "$(grep -c '"cidr"' "$tmp/out")" -eq "$1" ]; }

run --db "$db" rules create --cidr 192.168.0.0/16 --policy "$policy" --action allow \
    --description seed
check "seed rule" status_is 0

tui_console "$db"
check "console opens on the rules" tui_wait "192.168.0.0/16"

# ---- a rule: invalid CIDR first --------------------------------------------------
tui_keys c
check "c opens the rule form" tui_wait "Create rule"
tui_type "10.0.0.1/8"
check "the reason shows next to the field" tui_wait "host bits set: did you mean 10.0.0.0/8?"
tui_keys Tab Down
check "Down offers the cached policy" tui_wait "Policy        $policy"
tui_keys Enter
check "submit is refused" tui_wait "not saved: fix the fields marked '!' first"
check "nothing saved while invalid" rule_count 1
# The focus went back to the CIDR: fix it there.
tui_keys BSpace BSpace BSpace
tui_type "0/8"
check "the reason goes once fixed" tui_wait_gone "host bits set"
tui_keys Tab Tab Tab
tui_type "office é"
tui_keys Enter
check "a valid rule is saved" tui_wait "rule queued: allow 10.0.0.0/8"
check "the form closed" tui_wait_gone "Create rule"
check "saved in the database" sh -c "'$RAMPART' --db '$db' rules list --json | grep -q '10.0.0.0/8'"
rules_json
check "with its description and state new" \
    sh -c "grep -q '\"description\": *\"office é\"' '$tmp/out' && grep -q '\"state\": *\"new\"' '$tmp/out'"

# ---- Esc leaves nothing behind -----------------------------------------------------
tui_keys c
tui_wait "Create rule" >/dev/null
tui_type "172.16.0.0/12"
tui_keys Escape
check "Esc closes the form" tui_wait_gone "Create rule"
check "Esc saved nothing" rule_count 2

# ---- the rules view's policy filter pre-fills the form ---------------------------------
other=ipp_3WiZgDxrQlY1o5tG6oZgX4fKc2b
tui_keys :
tui_type "policy $other"
tui_keys Enter
tui_keys c
check "the form starts on the view's policy" tui_wait "Policy        $other"
tui_keys Escape
tui_wait_gone "Create rule" >/dev/null
tui_keys :
tui_type "policy"
tui_keys Enter

# ---- a credential with ACL rules ----------------------------------------------------
tui_keys 2
check "credentials view" tui_wait "[2 Creds]"
tui_keys c
check "c opens the credential form" tui_wait "Create credential"
tui_type "web agent"
tui_keys Tab
tui_type "bind:*.example.com"
tui_keys Enter
tui_type "bind:bad host"
check "a bad ACL rule's reason shows" tui_wait "whitespace"
tui_keys C-u
tui_type "bind:env=prod"
check "fixed" tui_wait_gone "whitespace"
tui_keys Enter Enter
check "credential saved" tui_wait "its token shows once"
creds_json
check "with both ACL rules" sh -c "grep -q 'bind:\*.example.com' '$tmp/out' && \
    grep -q 'bind:env=prod' '$tmp/out' && grep -q 'web agent' '$tmp/out'"

# ---- mark two rules and delete them: No, then Yes -------------------------------------
tui_keys 1
tui_wait "10.0.0.0/8" >/dev/null
tui_keys g Space Down Space
check "two marked" tui_wait "2 marked"
tui_keys d
check "the confirmation names them" tui_wait "Delete 2 marked rules?"
# The dialog's own wording: "<id>  allow <cidr>  <state>  <policy>".
named() { tui_has "allow 10.0.0.0/8  new  ipp_" && tui_has "allow 192.168.0.0/16  new  ipp_"; }
check "both rows named with their cidrs" named
check "No is the default" tui_wait ">[ No ]<"
tui_keys Enter
check "No deletes nothing" tui_wait "cancelled: nothing changed"
check "still two rules" rule_count 2
tui_keys d
tui_wait "Delete 2 marked rules?" >/dev/null
tui_keys y
check "Yes deletes" tui_wait "deleted: 2 removed now"
check "gone from the database" rule_count 0

tui_keys Q
check "quits with status 0" tui_exited_ok

# ---- read-only ------------------------------------------------------------------------
run --db "$db" rules create --cidr 10.9.0.0/16 --policy "$policy" --action deny
tui_console "$db" --readonly
tui_wait "10.9.0.0/16" >/dev/null
tui_keys c
check "readonly refuses c" tui_wait "read-only"
check "no form in read-only" tui_lacks "Create rule"
tui_keys d
check "no confirmation in read-only" tui_lacks "Delete 1 rule?"
check "readonly deleted nothing" rule_count 1
tui_keys Q
check "read-only console quits" tui_exited_ok
checks_done
exit 0
