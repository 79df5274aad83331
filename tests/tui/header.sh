#!/bin/sh
# The header's priorities, headless at 80 and 60 columns with a profile, against
# a real serve-api: the sync state and its countdown, then the push's count with
# its pace and ETA, are never cut for the profile's name or the view tabs (those
# shorten: "1R 2C 3P 4L", then the current view alone); on the second row the
# filter stays whole while the page and the sort give way. The profile_color
# setting is checked when read, with a clear message.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"
unset RAMPART_PROFILE

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
db="$tmp/staging.db"
mkdir -p "$XDG_CONFIG_HOME/rampart"
config() {
    cat >"$XDG_CONFIG_HOME/rampart/config" <<CFG
[profile.staging]
db = $db
profile_color = $1
CFG
    chmod 600 "$XDG_CONFIG_HOME/rampart/config"
}
config red
play() {
    name=$1
    shift
    cat >"$tmp/$name.keys"
    "$RAMPART" --profile staging tui --no-agent "$@" --headless "$tmp/$name.keys" \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    rm -f "$tmp"/screen.*
    awk -v dir="$tmp" 'BEGIN { n = 1 } $0 == "----" { n++; next }
        { print > (dir "/screen." n) }' "$tmp/out"
}
header() { head -n 1 "$tmp/screen.$1" | grep -E -q -- "$2"; }
row2() { sed -n 2p "$tmp/screen.$1" | grep -F -q -- "$2"; }
queue_rule() {
    "$RAMPART" --profile staging rules create --cidr "$1" --policy "$policy" --action deny \
        --description "rule number $1" >/dev/null
}
for i in 1 2 3 4; do queue_rule "10.$i.0.0/16"; done

# ---- the second row: the filter before the page and the sort -------------------------------
play filter <<'EOF'
key <Space>
key /
type rule number 10
key <Enter>
dump
resize 60x20
dump
EOF
check "filter: exit 0" status_is 0
check "filter: whole at 80 columns with a mark" row2 1 'filter "rule number 10"'
check "filter: the marks stay" row2 1 "1 marked"
check "filter: whole at 60 columns" row2 2 'filter "rule number 10"'
check "filter: the profile is named" header 1 "staging"

# ---- unreachable: the countdown whole, at 80 and at 60 columns --------------------------
start_server down || exit 1
stop_server # RAMPART_API_URL still names its (now closed) port
play down <<'EOF'
key s
wait-for unreachable, retry in
dump
resize 60x20
dump
EOF
check "unreachable: exit 0" status_is 0
check "unreachable at 80 columns: the countdown whole" header 1 "unreachable, retry in [0-9]+s$"
check "unreachable at 80 columns: the profile named" header 1 "staging"
check "unreachable at 80 columns: the current view" header 1 "\[1"
check "unreachable at 60 columns: the countdown whole" header 2 "unreachable, retry in [0-9]+s$"
check "unreachable at 60 columns: the profile named" header 2 "staging"

# ---- a paced push: the count with its pace and ETA at 80 columns -----------------------------
start_server paced || exit 1
export RAMPART_RATE=120 RAMPART_WINDOW=60 RAMPART_SHARE=80 # 1.6 requests a second
play paced <<'EOF'
key s
wait-for req/s, ETA
dump
wait-sync
EOF
check "paced: exit 0" status_is 0
check "paced at 80 columns: count, pace and ETA" \
    header 1 "pushing [0-9] of 4, paced: 1.6 req/s, ETA [0-9]+s$"
check "paced at 80 columns: the profile named" header 1 "rampart \(staging\)"
check "paced at 80 columns: the tabs shortened" header 1 "\[1R\] 2C  3P  4L"
stop_server
export RAMPART_RATE=0

# ---- profile_color: checked, with what it may be -----------------------------------------
config pink
run --profile staging status
check "profile_color: a bad one refused (exit 2)" status_is 2
check "profile_color: the message names the setting and the colours" \
    err_has "profile_color must be one of none, red, green, yellow, blue, magenta, cyan, not 'pink'"
config Magenta
run --profile staging status
check "profile_color: any case" status_is 0
checks_done
exit 0
