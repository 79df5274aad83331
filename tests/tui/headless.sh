#!/bin/sh
# The console driven headless (`rampart tui --headless SCRIPT`) over a cache of
# 10,000 rules made by `rampart rules import`: the dumped screens are what a
# terminal shows.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

db="$tmp/cache.db"
tui_cache 10000 "$db" || fail "import"

# play NAME [OPTIONS]: run the script $tmp/NAME.keys (from stdin) headless.
play() { headless_play "$db" "$@"; }

# screen N PATTERN: screen N holds PATTERN (a fixed string).
# row N LINE PATTERN: line LINE (1-based) of screen N holds PATTERN.
row() { sed -n "$2p" "$tmp/screen.$1" | grep -F -q -- "$3"; }

play browse <<'EOF'
dump
key <PgDn>
dump
key G
dump
key g
dump
key <PgDn> <PgDn> <PgUp>
dump
key <End>
key k k k
dump
EOF
check "browse: exit 0" status_is 0
check "browse: first page position" screen 1 "rows 1-20 of 10,000  page 1/500"
check "browse: first row" row 1 4 "10.0.0.0/32"
check "browse: 20 rows, cursor on the first" row 1 4 "▶"
check "browse: PgDn" screen 2 "rows 21-40 of 10,000  page 2/500"
check "browse: PgDn rows" row 2 4 "10.0.0.20/32"
check "browse: G" screen 3 "rows 9,981-10,000 of 10,000  page 500/500"
check "browse: G last row" row 3 23 "10.0.39.15/32"
check "browse: G cursor on the last row" row 3 23 "▶"
check "browse: g" screen 4 "rows 1-20 of 10,000  page 1/500"
check "browse: PgUp" screen 5 "rows 21-40 of 10,000  page 2/500"
check "browse: k moves the cursor, not the page" row 6 20 "▶ "
check "browse: k keeps the last page" screen 6 "page 500/500"
check "browse: key hints" row 1 24 "? help"

play scroll <<'EOF'
repeat 25 key j
dump
key <C-d>
dump
key <C-u> <C-u>
dump
EOF
check "scroll: j past the screen scrolls row by row" screen 1 "rows 7-26 of 10,000"
check "scroll: cursor on the last row" row 1 23 "▶ local"
check "scroll: the row under it" row 1 23 "10.0.0.25/32"
check "scroll: C-d half a page" screen 2 "rows 17-36 of 10,000"
check "scroll: C-u" screen 3 "rows 1-20 of 10,000"

play help <<'EOF'
key ?
dump
key <Esc>
dump
EOF
check "help: lists the keys of the view" screen 1 "Keys of the Rules view"
check "help: PgDn" screen 1 "next page"
check "help: policy filter key" screen 1 "rules of one policy"
check "help: closes" no_screen 2 "Keys of the Rules view"
check "help: a whole-width box at 80 columns (no stray cells at the edges)" \
    sh -c "sed -n '3p;4p' '$tmp/screen.1' | grep -c '^[┌│].*[┐│]\$' | grep -qx 2"

play filter <<'EOF'
key /
type 10.0.39.1
dump
key <Enter>
dump
key <Esc>
dump
key /
type zzz-no-such
key <Enter>
dump
EOF
check "filter: live count" screen 1 "rows 1-7 of 7"
check "filter: prompt shows the text" row 1 24 "/10.0.39.1"
check "filter: header names it" screen 2 'filter "10.0.39.1"'
check "filter: rows match" row 2 4 "10.0.39.1/32"
check "filter: Esc clears" screen 3 "rows 1-20 of 10,000"
check "filter: nothing matches" screen 4 'No rows match the filter "zzz-no-such"'

play views <<'EOF'
key 2
dump
key <Tab>
dump
key :
type log
key <Enter>
dump
key <BTab> <BTab> <BTab>
dump
key :
type foo
key <Enter>
dump
EOF
check "views: credentials" screen 1 "[2 Creds]"
check "views: no credentials" screen 1 "No credentials in this cache yet."
check "views: Tab to pending" screen 2 "[3 Pending]"
check "views: pending shows the plan" row 2 4 "+ rule"
check "views: pending reason" row 2 4 "create"
check "views: :log" screen 3 "[4 Log]"
check "views: BTab back to rules" screen 4 "[1 Rules]"
check "views: unknown command" screen 5 "unknown command ':foo'"
check "views: the error is logged" status_is 0

play commands <<'EOF'
key :
type creds
key <Enter>
dump
key :
type pending
key <Enter>
dump
key :
type rules
key <Enter>
dump
key 4
dump
key 3
dump
EOF
check "commands: :creds" screen 1 "[2 Creds]"
check "commands: :pending" screen 2 "[3 Pending]"
check "commands: :rules" screen 3 "[1 Rules]"
check "commands: 4" screen 4 "[4 Log]"
check "commands: 3" screen 5 "[3 Pending]"

# q steps back: the views left, newest first (each once), then it quits.
play back <<'EOF'
dump
key 2 4 3 4
dump
key q
dump
key q
dump
key q
dump
key q
dump
EOF
check "back: at the top the key bar says quit" row 1 24 "q quit"
check "back: with views to go back to it says back" row 2 24 "q back"
check "back: q returns to the view left last" screen 3 "[3 Pending]"
check "back: then the one before" screen 4 "[2 Creds]"
check "back: each view once" screen 5 "[1 Rules]"
check "back: nothing left: quit" sh -c "[ ! -s '$tmp/screen.6' ]"
check "back: exit 0" status_is 0

play narrow <<'EOF'
resize 59x20
dump
resize 100x30
dump
resize 80x24
dump
EOF
check "narrow: says so" screen 1 "terminal too small: need 60x14 (now 59x20)"
check "narrow: draws nothing else" no_screen 1 "rows 1-"
check "narrow: 100x30 shows 26 rows" screen 2 "rows 1-26 of 10,000  page 1/385"
check "narrow: back at 80x24" screen 3 "rows 1-20 of 10,000"

# Too small, keys would act unseen: only q/Q do anything (as the screen says).
play blind <<'EOF'
resize 59x20
key d c /
resize 80x24
dump
resize 59x20
key q
resize 80x24
dump
EOF
check "blind: d opened nothing" no_screen 1 "Delete 1 rule?"
check "blind: c opened nothing" no_screen 1 "Create rule"
check "blind: / opened no prompt" row 1 24 "? help"
check "blind: q quits" sh -c "[ ! -s '$tmp/screen.2' ]"
check "blind: exit 0" status_is 0

play policy <<'EOF'
key :
type policy ipp_test00003
key <Enter>
dump
key q
dump
key p
dump
key j j j j <Enter>
dump
EOF
check "policy: count" screen 1 "rows 1-20 of 1,429"
check "policy: header" screen 1 "policy ipp_test00003"
check "policy: rows of it only" row 1 4 "10.0.0.3/32"
check "policy: q clears it" screen 2 "rows 1-20 of 10,000"
check "policy: picker lists the cached ids" screen 3 "ipp_test00006"
check "policy: picker offers all" screen 3 "(all policies)"
check "policy: picked" screen 4 "policy ipp_test00003"

play sort <<'EOF'
key :
type sort cidr desc
key <Enter>
dump
key O
dump
key o
dump
key :
type sort color
key <Enter>
dump
EOF
check "sort: cidr descending (address order)" row 1 4 "10.0.39.15/32"
check "sort: header" screen 1 "sort cidr desc"
check "sort: O reverses" row 2 4 "10.0.0.0/32"
check "sort: o next column" screen 3 "sort action asc"
check "sort: allow first" row 3 4 "allow"
check "sort: unknown column" screen 4 "cannot sort this view by 'color'"

play marks <<'EOF'
key <Space> <Space>
dump
key j j V
dump
key <PgDn> V
dump
key U
dump
EOF
check "marks: space marks and moves down" screen 1 "2 marked"
check "marks: shown without colour" row 1 4 " *local_"
check "marks: range" screen 2 "5 marked"
check "marks: range across pages" screen 3 "25 marked"
check "marks: unmark all" no_screen 4 "marked"

play details <<'EOF'
key j <Enter>
dump
key q
dump
EOF
check "details: cidr" screen 1 "10.0.0.1/32"
check "details: labels" screen 1 "policy"
check "details: state" screen 1 "new"
check "details: full id" screen 1 "local_"
check "details: q closes" no_screen 2 "q closes"

play ascii --ascii <<'EOF'
key ?
dump
EOF
check "ascii: box in ASCII" screen 1 "+- Keys of the Rules view"
check "ascii: no UTF-8 bytes" sh -c "! LC_ALL=C grep -q -P '[\x80-\xff]' '$tmp/screen.1'"

play readonly --readonly <<'EOF'
dump
key c
dump
key ?
dump
EOF
check "readonly: hints lack create" no_screen 1 "c create"
check "readonly: header says so" screen 1 "read-only"
check "readonly: c refused" screen 2 "read-only console"
check "readonly: help hides mutating keys" no_screen 3 "delete the marked rows"
check "readonly: key bar lacks delete and sync" sh -c "! grep -q -e 'd delete' -e 's sync' '$tmp/screen.1'"

play readonly_creds --readonly <<'EOF'
key 2 ?
dump
key <PgDn>
dump
key q :
type help
key <Enter>
repeat 3 key <PgDn>
dump
key q t
dump
key :
type sync
key <Enter>
dump
EOF
check "readonly: help hides the token key" \
    sh -c "! grep -q \"show the credential's token\" '$tmp/screen.1' '$tmp/screen.2'"
check "readonly: help still lists the safe keys" screen 2 "sync and agent log"
check "readonly: :help hides :sync" no_screen 3 ":sync"
check "readonly: :help lists :quit" screen 3 ":quit"
check "readonly: t refused" screen 4 "changes and tokens are off"
check "readonly: :sync refused" screen 5 "changes and tokens are off"

play quit <<'EOF'
key Q
key j
dump
EOF
check "quit: Q ends the script" sh -c "[ ! -s '$tmp/out' ]"
check "quit: exit 0" status_is 0

play bad <<'EOF'
dump
key <Nope>
EOF
check "bad script: exit 2" status_is 2
check "bad script: names the line" err_has "bad.keys line 2: unknown key name '<Nope>'"
check "bad script: nothing ran" sh -c "[ ! -s '$tmp/out' ]"

printf 'dump\n' >"$tmp/one.keys"
run --db "$db" tui --no-agent --headless "$tmp/one.keys" --size 70x15
check "size: 70x15" sh -c "[ \$(head -n 15 '$tmp/out' | wc -L) -le 70 ] && grep -q 'rows 1-11 of 10,000' '$tmp/out'"
run --db "$db" tui --headless "$tmp/one.keys" --size 80
check "size: bad value" refused 2 "is not WIDTHxHEIGHT"
run --db "$db" tui --size 80x24
check "size: without --headless" refused 2 "--size is for --headless"
run --db "$db" tui --headless "$tmp/missing.keys"
check "missing script" refused 2 "cannot open the script"
run --db "$db" tui </dev/null
check "no terminal: refused" refused 2 "needs a terminal"

# The sandbox's private server is named in the header; a real remote is not.
run --sandbox tui --no-agent --headless "$tmp/one.keys"
check "sandbox: named in the header" sh -c "head -n 1 '$tmp/out' | grep -q 'sandbox: never synced'"
run --db "$db" tui --no-agent --headless "$tmp/one.keys"
check "no sandbox: not named" sh -c "! head -n 1 '$tmp/out' | grep -q 'sandbox'"
checks_done
