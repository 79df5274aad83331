#!/bin/sh
# The pending view, headless: during a sync each row shows its state as it
# changes (a row pushed leaves the plan while the sync still runs, against a real
# serve-api whose second create fails once with a 500, so the run waits in
# between); its columns share the width (at 130 columns a row's id and what it
# is about show whole; at 60 the reason stays).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
db="$tmp/pending.db"
play() {
    name=$1
    shift
    headless_play "$db" "$name" "$@"
}
queue_rule() {
    "$RAMPART" --db "$db" rules create --cidr "$1" --policy "$policy" --action deny \
        --description "$2" >/dev/null
}

# ---- the columns share the width ----------------------------------------------------------
queue_rule 10.1.0.0/16 "the first rule, with a description"
queue_rule 10.2.0.0/16 "the second rule"
first=$("$RAMPART" --db "$db" rules list --filter 10.1.0.0 -o name)
play widths --size 130x24 <<'EOF'
key 3
dump
resize 80x24
dump
resize 60x20
dump
EOF
check "widths: exit 0" status_is 0
check "widths: at 130 columns the id is whole" screen 1 "$first"
check "widths: at 130 columns what the row is about is whole" \
    screen 1 "10.1.0.0/16 deny $policy"
check "widths: at 80 columns the reason stays" screen 2 "create"
check "widths: at 60 columns what the row is about stays" screen 3 "10.1.0.0/16 deny"
check "widths: at 60 columns the reason stays" screen 3 "create"

# ---- the state of each row while the sync runs -------------------------------------------
start_server live --faults "create_rule:500@2" || exit 1
play live --size 130x24 <<'EOF'
key 3
dump
key s
wait-for server error 500
dump
wait-sync
dump
EOF
check "live: exit 0" status_is 0
check "live: before the sync both rows are queued" sh -c "[ \$(grep -c -F ' new ' '$tmp/screen.1') = 2 ]"
check "live: while the sync waits, the row pushed has left the plan" \
    sh -c "[ \$(grep -c -F ' rule local_' '$tmp/screen.2') = 1 ]"
check "live: ... the other shows its state now (a 500: outcome unknown)" \
    screen 2 " unknown "
check "live: ... and the position says so" screen 2 "rows 1-1 of 1"
check "live: after the sync nothing is left" screen 3 "(no rows)"
stop_server
checks_done
exit 0
