#!/bin/sh
# The edit form in a real terminal (tmux at 80x24, the real binary): 'e' on a rule
# opens its form pre-filled with the policy and action marked read-only; a new
# description saved shows in the row and the status line; on a synced rule the
# row then shows "edited", and the details show base -> local. The cache is checked
# with the CLI on the same file while the console is open.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

db="$tmp/edit.db"
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a

start_server tmux_edit || exit 1
run --db "$db" rules create --cidr 10.1.0.0/16 --policy "$policy" --action deny \
    --description before
run --db "$db" sync
check "seed rule synced" status_is 0
stop_server # the console never needs the remote here: nothing is synced from it

tui_console "$db"
check "console opens on the rules" tui_wait "10.1.0.0/16"
check "the row is synced" tui_wait "synced"

tui_keys e
check "e opens the edit form" tui_wait "Edit rule ipr_"
check "pre-filled with the cidr" tui_wait "> CIDR          10.1.0.0/16"
check "the policy read-only" tui_wait "$policy  (read-only)"
check "the action read-only" tui_wait "deny  (read-only)"
tui_keys Tab
check "Tab skips to the description" tui_wait "> Description   before"
tui_keys C-u
tui_type "after"
check "typed" tui_wait "> Description   after"
tui_keys Enter
check "the status line says it was edited" tui_wait "edited, sync pending: description"
check "the form closed" tui_wait_gone "Edit rule"
row_edited() { tui_capture | grep -F "10.1.0.0/16" | grep -F "after" | grep -q "deny   edited"; }
check "the row shows edited and the new description" tui_poll 10 row_edited
run --db "$db" rules list --json
check "stored: edited, the new description" \
    sh -c "grep -q '\"state\": *\"edited\"' '$tmp/out' && grep -q '\"description\": *\"after\"' '$tmp/out'"
tui_keys Enter
check "the details show base -> local" tui_wait "description  before -> after"
tui_keys q

tui_keys Q
check "quits with status 0" tui_exited_ok

# ---- read-only: no form ---------------------------------------------------------------
tui_console "$db" --readonly
tui_wait "10.1.0.0/16" >/dev/null
tui_keys e
check "readonly refuses e" tui_wait "read-only"
check "no edit form in read-only" tui_lacks "Edit rule"
tui_keys Q
check "read-only console quits" tui_exited_ok
checks_done
exit 0
