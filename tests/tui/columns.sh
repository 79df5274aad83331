#!/bin/sh
# Headless (`rampart tui --headless SCRIPT`), at 80x24 and 60x20: how the record
# views share their width (a credential's ACL before its creation time, which is a
# date; the id cut less), `o` going through the columns in the order they are on
# screen, the key bar and help saying that Space marks and moves down, a form's
# own keys on the key bar, and the policy picker counting each policy's rules.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

# play DB NAME [OPTIONS]: run the script $tmp/NAME.keys (from stdin) headless.
play() { headless_play "$@"; }
# the screen's status area (its last two rows: a message may wrap onto two)
status_has() {
    tail -n 2 "$tmp/screen.$1" | sed 's/^ *//; s/ *$//' | tr '\n' ' ' | grep -F -q -- "$2"
}
last_row_is() { [ "$(tail -n 1 "$tmp/screen.$1" | sed 's/ *$//')" = "$2" ]; }
# the second row (position, sort, filter) of screen N holds TEXT
position_has() { sed -n 2p "$tmp/screen.$1" | grep -F -q -- "$2"; }

rules="$tmp/rules.db"
cat >"$tmp/rules.json" <<'JSON'
[{"cidr":"10.0.0.0/8","ip_policy_id":"ipp_alpha01","action":"allow","description":"ten"},
 {"cidr":"10.1.2.0/24","ip_policy_id":"ipp_alpha01","action":"deny","description":"lab"},
 {"cidr":"192.168.0.0/16","ip_policy_id":"ipp_beta001","action":"allow","description":"home"}]
JSON
"$RAMPART" --db "$rules" rules import "$tmp/rules.json" >/dev/null || echo "not ok - import"

# ---- o: the sortable columns in the order they are on screen --------------------
play "$rules" sort <<'EOF2'
dump
key o
dump
key o
dump
key o
dump
key o
dump
key o
dump
key i o
dump
EOF2
check "sort: exit 0" [ "$status" = 0 ]
check "sort: by id at first" position_has 1 "sort id asc"
check "sort: o, the next column on screen: cidr" position_has 2 "sort cidr asc"
check "sort: o says it" status_has 2 "sorted by cidr, ascending"
check "sort: then action" position_has 3 "sort action asc"
check "sort: then state" position_has 4 "sort state asc"
check "sort: then policy (after STATE on screen)" position_has 5 "sort policy asc"
check "sort: round to id" position_has 6 "sort id asc"
check "sort: the id hidden (i): o skips it" position_has 7 "sort cidr asc"

# ---- Space marks and moves down: the key bar and help say so -----------------------
play "$rules" mark <<'EOF2'
key <Space>
dump
key ?
dump
key q
resize 60x20
key ?
key <PgDn>
dump
EOF2
check "mark: exit 0" [ "$status" = 0 ]
check "mark: Space marked the first row" grep -q '^ \*.*10\.0\.0\.0/8' "$tmp/screen.1"
check "mark: and moved down to the second" grep -q '^▶ .*10\.1\.2\.0/24' "$tmp/screen.1"
check "mark 80x24: the key bar says it" \
    last_row_is 1 " ? help  q quit  c create  / filter  s sync  e edit  d delete  Space mark+down"
check "mark 80x24: help says it" screen 2 "mark or unmark the row, then move down one row"
check "mark 60x20: help says it" screen 3 "Space                 mark or unmark the row, then move"

# ---- a form open: the key bar shows the form's keys, not the view's ------------------
play "$rules" form_keys <<'EOF2'
key c
dump
key <Tab> <Tab>
dump
key <Esc> e
dump
key <Esc>
resize 60x20
key c
dump
EOF2
check "form: exit 0" [ "$status" = 0 ]
check "form 80x24: the create form's keys" \
    last_row_is 1 " Enter save  Tab next field  Esc cancel  BTab previous field"
check "form 80x24: not the view's" no_screen 1 "u undo"
check "form 80x24: on the action, Space's option too" \
    last_row_is 2 " Enter save  Tab next field  Esc cancel  Space next option  BTab previous field"
check "form 80x24: the edit form's keys" last_row_is 3 " Enter save  Tab next field  Esc cancel  BTab previous field"
check "form 60x20: whole keys only" last_row_is 4 " Enter save  Tab next field  Esc cancel"
check "form 60x20: not the view's" no_screen 4 "c create"

# ---- the policy picker: each policy with how many rules it holds -----------------
play "$rules" picker <<'EOF2'
key p
dump
key j <Enter>
dump
resize 60x20
key p
dump
EOF2
check "picker: exit 0" [ "$status" = 0 ]
check "picker 80x24: a policy's rules counted" screen 1 "ipp_alpha01  2 rules"
check "picker 80x24: one rule" screen 1 "ipp_beta001  1 rule "
check "picker: the pick still scopes the view" position_has 2 "policy ipp_alpha01"
check "picker: to its rules" position_has 2 "rows 1-2 of 2"
check "picker 60x20: the counts" screen 3 "ipp_alpha01  2 rules"

# ---- the width, shared by what people read ----------------------------------------
# A whole CIDR column is as wide as its widest cell, not its minimum of 18.
play "$rules" rules_width <<'EOF2'
dump
resize 60x20
dump
EOF2
check "rules 80x24: the CIDR column no wider than its widest cell" \
    screen 1 "192.168.0.0/16 allow"
check "rules 60x20: the same" screen 2 "192.168.0.0/16 allow"
check "rules 60x20: the description shown" screen 2 "home"

start_server columns || exit 1
creds="$tmp/creds.db"
run --db "$creds" creds create --description "web agent" --acl bind:a.example.com \
    --acl "bind:*.b.example.org" --sync
run --db "$creds" creds create --description "jump host" --acl bind:x.example.com --sync
run --db "$creds" sync
check "creds: created and synced" status_is 0
cred=$(server_ids credentials | head -n 1)
tail6=${cred#"${cred%??????}"}
play "$creds" creds_width <<'EOF2'
key 2
dump
resize 60x20
dump
EOF2
check "creds 80x24: exit 0" [ "$status" = 0 ]
check "creds 80x24: the ACL read further than 13 columns" \
    screen 1 "bind:a.example.com, bind:*.b.ex"
check "creds 80x24: CREATED a date" grep -q " 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] *\$" "$tmp/screen.1"
check "creds 80x24: no time of day" sh -c "! grep -q 'T[0-9][0-9]:[0-9][0-9]:' '$tmp/screen.1'"
check "creds 80x24: the id cut less (its last 6 characters)" screen 1 "$tail6"
check "creds 60x20: the ACL still read" screen 2 "bind:a.example.com, b"
check "creds 60x20: the id too" screen 2 "$tail6"
checks_done
exit 0
