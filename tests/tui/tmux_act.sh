#!/bin/sh
# Acting in the console (tmux at 80x24, the real binary, a real serve-api): the
# token dialog of a credential created offline and synced by `rampart sync` comes
# up at the next start ("not yet shown"); 'Y' there and 'y'/'Y' on a row send
# OSC 52 (plain for tmux's clipboard, then wrapped for the outer terminal) and say
# it was sent, not copied; 'u' takes back a queued delete; the rule form refuses
# a policy id of the wrong shape with the validator's words (the CLI's) and takes
# ipp_1 as the CLI does; the delete confirmation names a mark the filter hides;
# Esc clears marks only when pressed twice. And headless, outside tmux: the copy is the plain sequence alone.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

db="$tmp/act.db"
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
pane="$tmp/pane.out"

start_server tmux_act || exit 1
run --db "$db" rules create --cidr 10.1.0.0/16 --policy "$policy" --action deny \
    --description first
run --db "$db" rules create --cidr 10.2.0.0/16 --policy "$policy" --action allow \
    --description second
run --db "$db" creds create --description "offline agent"
check "credential queued offline" status_is 0
run --db "$db" sync
check "rules and credential synced by the CLI" status_is 0

# ---- headless, TMUX unset: the plain sequence alone ---------------------------------------
run --db "$db" rules list --json
first=$(sed -n 's/.*"id": *"\(ipr_[0-9A-Za-z]*\)".*/\1/p' "$tmp/out" | sort | head -n 1)
check "the first rule's id" sh -c "[ -n '$first' ]"
printf 'key y\ndump\n' >"$tmp/copy.keys"
env -u TMUX "$RAMPART" --db "$db" tui --no-agent --readonly --headless "$tmp/copy.keys" \
    >"$tmp/out" 2>"$tmp/err"
b64=$(printf '%s' "$first" | base64 | tr -d '\n')
check "outside tmux: exactly ESC ] 52;c;BASE64 BEL" grep -q -x -F "raw: \\e]52;c;$b64\\a" "$tmp/out"
check "outside tmux: no tmux passthrough" out_lacks "Ptmux"
check "outside tmux: says sent, not copied" out_has "sent to the terminal's clipboard"

# ---- the token dialog after a restart --------------------------------------------------------
tui_console "$db"
tui_tmux set-option -g set-clipboard on >/dev/null
tui_pipe "$pane"
check "the token not yet shown comes up at start" tui_wait "New token: cr_"
check "it names the credential" tui_wait "offline agent"
tui_keys c
check "only 'Y' copies the token" tui_wait "'Y' sends the token"
tui_keys Y
check "token: sent, not copied" tui_wait "token sent to the terminal's clipboard"
tui_keys Enter
check "closed: masked" tui_wait "hidden:"
cred=$(tui_capture | sed -n 's/.*token of \(cr_[0-9A-Za-z]*\) hidden.*/\1/p' | head -n 1)
run --db "$db" creds token "$cred"
token=$(cat "$tmp/out")
buffer_is() { [ "$(tui_tmux show-buffer 2>/dev/null)" = "$1" ]; }
check "tmux's clipboard holds the token" tui_poll 10 buffer_is "$token"

# ---- y and Y on a row --------------------------------------------------------------------------
check "the first rule is synced" tui_wait "synced"
tui_keys y
check "y: the id sent, not copied" tui_wait "sent to the terminal's clipboard"
check "y: tmux's clipboard holds the id" tui_poll 10 buffer_is "$first"
check "y: the wrapped sequence for the outer terminal too" grep -a -F -q "Ptmux;" "$pane"
tui_keys Y
check "Y: the cidr sent" tui_wait "cidr 10.1.0.0/16 sent"
check "Y: tmux's clipboard holds the cidr" tui_poll 10 buffer_is "10.1.0.0/16"

# ---- undo a queued delete -----------------------------------------------------------------------
tui_keys d
check "delete asks" tui_wait "Delete 1 rule?"
tui_keys y
check "queued for the next sync" tui_wait "marked for the next sync"
row_state() { tui_capture | grep -F "10.1.0.0/16" | grep -q "$1"; }
check "the row is deleting" tui_poll 10 row_state deleting
tui_keys u
check "u says what it undid" tui_wait "undone: the queued delete of $first"
check "the row is back to synced" tui_poll 10 row_state synced
run --db "$db" rules list --json
check "stored: nothing deleting" out_lacks '"deleting"'

# ---- the form checks the policy id's shape as the CLI does --------------------------------------
run --db "$db" rules create --cidr 10.3.0.0/16 --policy ipp-1 --action deny
cli_reason=$(sed 's/^rampart: //' "$tmp/err")
check "the CLI refuses ipp-1" sh -c "[ '$status' -ne 0 ] && [ -n '$cli_reason' ]"
tui_keys c
tui_wait "Create rule" >/dev/null
tui_type "10.3.0.0/16"
tui_keys Tab C-u
tui_type "ipp-1"
tui_keys Enter
check "the form refuses it with the CLI's reason" tui_wait "$cli_reason"
check "the form stays open" tui_has "Create rule"
tui_keys Escape
check "the form closes" tui_wait_gone "Create rule"
# ipp_1 has the shape (ipp_ and base62): the CLI and the form both take it.
run --db "$db" rules create --cidr 10.4.0.0/16 --policy ipp_1 --action deny
check "the CLI takes ipp_1" status_is 0
tui_keys c
tui_wait "Create rule" >/dev/null
tui_type "10.5.0.0/16"
tui_keys Tab C-u
tui_type "ipp_1"
tui_keys Enter
check "the form takes ipp_1 too" tui_wait "new rule queued: allow 10.5.0.0/16"

# ---- a mark the filter hides ---------------------------------------------------------------------
tui_keys g Space
check "one marked" tui_wait "1 marked"
tui_keys /
tui_type "10.2.0.0"
tui_keys Enter
check "filtered to the second rule" tui_wait_gone "10.1.0.0/16"
tui_keys Space d
check "the confirmation names the hidden mark" \
    tui_wait "Delete 2 marked rules (1 hidden by the filter)?"
tui_keys n
check "answered no" tui_wait_gone "hidden by the filter"

# ---- Esc: the filter, then the marks only at a second Esc -----------------------------------------
tui_keys Escape
check "first Esc clears the filter" tui_wait "filter cleared"
tui_keys Escape
check "the next Esc says how many and how to clear" tui_wait "2 marked: Esc again clears them"
tui_keys Escape
check "a second Esc clears them" tui_wait "cleared 2 marks"
check "none marked" tui_wait_gone "2 marked"

tui_keys Q
check "quits with status 0" tui_exited_ok
checks_done
exit 0
