#!/bin/sh
# The console through tmux with hostile text: a description and metadata holding
# ESC, OSC (a window title), BEL, CSI, U+202E and a C1 CSI show as \x1b, \x07,
# \u202e, \u009b literally, in the table and the details, and never reach the
# terminal (the pane keeps its title, the screen keeps its rows); a bidi control
# typed into a form shows escaped too. A credential whose create reply held a
# malformed token shows why; the long message of 't' on it wraps over the status
# rows (finding 9) at 80x24 and at the smallest size, 64x14; below it (60 columns)
# the console says it is too small.
. "$(dirname "$0")/../e2e/lib.sh"
HOSTILE_SERVER="$(dirname "$0")/../e2e/hostile_server.py"
. "$(dirname "$0")/../e2e/hostile_lib.sh"
. "$(dirname "$0")/lib.sh"
trap 'stop_hostile; tui_cleanup' EXIT INT TERM

if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is missing (the hostile remote needs it)"
    exit 1
fi

db="$tmp/escape.db"
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
desc=$(printf 'evil\033]0;pwned\007\033[2J\342\200\256rev\302\233x')
run --db "$db" rules create --cidr 10.7.0.0/16 --policy "$policy" --action deny \
    --description "$desc" --metadata "$(printf 'm\033[31mred')"
check "seed: a rule with a hostile description" status_is 0

title() { tui_tmux display-message -p -t "$tui_session" '#{pane_title}'; }
rlo=$(printf '\342\200\256')
no_rlo() { ! tui_capture | grep -q "$rlo"; }

tui_console "$db"
check "the console opens on the rule" tui_wait "10.7.0.0/16"
check "the table shows the escape literally" tui_wait 'evil\x1'
tui_keys Enter
check "details: ESC, OSC, BEL shown literally" tui_wait 'evil\x1b]0;pwned\x07\x1b[2J'
check "details: U+202E and the C1 CSI shown literally" tui_wait '\u202erev\u009bx'
check "details: the metadata's ESC shown literally" tui_wait 'm\x1b[31mred'
check "the OSC never reached the terminal: the title is not pwned" [ "$(title)" != pwned ]
check "no U+202E on the screen" no_rlo
check "the header is still on its row (no ESC[2J)" \
    sh -c "tmux -S '$tui_sock' capture-pane -p -t '$tui_session' | head -n 1 | grep -q rampart"
tui_keys Escape

# ---- a bidi control typed into a form ----------------------------------------------------
tui_keys c
check "c opens the rule form" tui_wait "Create rule"
tui_type "10.8.0.0/16"
tui_keys Tab
tui_type "$policy"
tui_keys Tab Tab
tui_type "$(printf 'typed\342\200\256here')"
check "the typed U+202E shows escaped in the field" tui_wait 'typed\u202ehere'
check "no U+202E on the screen (form)" no_rlo
tui_keys Escape
# A long message of the console's own: wrapped, its end on the last row.
tui_keys :
tui_type "sort a-column-name-long-enough-that-the-message-goes-past-the-edge x"
tui_keys Enter
check "a long message wraps: its start" tui_wait "error: :sort a-column-name-long-enough"
check "a long message wraps: its end, not cut" tui_wait "is not asc or desc"
tui_keys Q
check "quits" tui_exited_ok

# ---- a malformed token: the reason, and a message that wraps ----------------------------
cdb="$tmp/creds.db"
start_hostile escape
run --db "$cdb" creds create --description hostile-token --sync
check "create --sync against the hostile remote: orphaned" out_has "(orphaned)"
stop_hostile
unset RAMPART_API_URL RAMPART_API_KEY
tui_console "$cdb"
tui_keys 2
check "the credential is listed orphaned" tui_wait "orphaned"
check "its note says why" tui_wait "malformed token (not stored)"
check "no ESC byte reached the terminal: the title is not pwned" [ "$(title)" != pwned ]
tui_keys t
check "t asks first" tui_wait "Show the token of"
tui_keys y
check "the refusal's start on the screen" tui_wait "error: no token to show: credential"
check "its end too: wrapped, not cut" tui_wait "(byte 29 of 55)"
# The message's last row is the screen's last; the row above holds its start.
last_rows() { tui_capture | tail -n 3; }
wrapped_80() {
    last_rows | tail -n 1 | grep -q "(byte 29 of 55)" &&
        last_rows | grep -q "error: no token to show"
}
check "80x24: the message fills the last rows" wrapped_80
check "80x24: the header keeps its two rows" \
    sh -c "tmux -S '$tui_sock' capture-pane -p -t '$tui_session' | head -n 2 | tail -n 1 | grep -q 'rows 1-1 of 1'"
tui_resize 64x14
check "64x14: still whole (on five rows)" tui_wait "(byte 29 of"
check "64x14: the row stays above the message" tui_wait "cr_2HostileCred"
rows_64() { [ "$(tui_capture | wc -l)" -le 14 ] && tui_capture | tail -n 1 | grep -q "55)"; }
check "64x14: the message ends on the last row" rows_64
tui_resize 59x24
check "59 columns: too small, said so" tui_wait "terminal too small: need 60x14 (now 59x24)"
tui_resize 80x24
check "back to 80x24: the message again" tui_wait "(byte 29 of 55)"
tui_keys j
check "a key clears the message: the row's note is back" tui_wait "! orphaned: the remote"
check "the message's rows went back to the view" tui_wait_gone "(byte 29 of 55)"
tui_keys Q
check "quits again" tui_exited_ok

checks_done
exit 0
