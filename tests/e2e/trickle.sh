#!/bin/sh
# A reply that trickles (serve-api --faults ...:trickle=1000: the body one byte a
# second) meets the client's low-speed limit (settings low_speed, low_speed_time:
# RAMPART_LOW_SPEED bytes/s for RAMPART_LOW_SPEED_TIME s, default 10 for 20 s): a
# sync ends in under 40 s instead of hanging on it, says timed_out, and loses
# nothing (the row stays queued; the next sync without the fault converges, with
# no duplicate on the server). Times are bounds only (the cut comes from the
# limit, not from a sleep of ours).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
BOUND=40 # seconds: the low-speed time (20: libcurl notices some seconds later) and room, far below a hang

# timed_sync DB [ARGS...]: a sync with --json, cut at 60 s whatever happens (so a
# sync that hangs fails the bound instead of the test run); its seconds in $took.
timed_sync() {
    db=$1
    shift
    t0=$(date +%s)
    timeout 60 "$RAMPART" --db "$db" sync --json "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    took=$(($(date +%s) - t0))
}
took_under() { [ "$took" -lt "$1" ]; }
# The report (the last JSON line) names a timed_out failure.
report_timed_out() { grep '"event": "report"' "$tmp/out" | grep -q '"failure": {"kind": "timed_out"'; }
# Some event of the run (a wait, a log line or the report) names a timed_out failure.
saw_timed_out() { grep -q '"kind": "timed_out"\|timed out waiting for the reply' "$tmp/out"; }
# state DB CIDR: the cache's state of the rule holding CIDR ("" when there is none).
state() { "$RAMPART" --db "$1" rules list --filter "$2" | awk -v c="$2" 'NR > 1 && $5 == c { print $2 }'; }
server_cidr_count() { server_list ip_policy_rules cidr | grep -c -x "$1"; }

# ---- one trickled reply: the create of the queued row ----
# The low-speed limit set short (5 s) through the settings: the cut comes from it.
db="$tmp/one.db"
start_server one --faults 'create_rule:trickle=1000@1' || exit 1
"$RAMPART" --db "$db" rules create --cidr 10.1.0.0/16 --policy $P --action allow >/dev/null
RAMPART_LOW_SPEED=10 RAMPART_LOW_SPEED_TIME=5 timed_sync "$db"
check "one trickled reply, low_speed_time 5: the sync ends in under $BOUND s (took ${took} s)" \
    took_under $BOUND
check "... the low-speed limit cut the reply (timed_out)" saw_timed_out
check "... converged or not (0 or 4), never an error of its own" \
    sh -c '[ "$0" = 0 ] || [ "$0" = 4 ]' "$status"
check "... the row is still in the cache" [ -n "$(state "$db" 10.1.0.0/16)" ]
start_server one || exit 1
timed_sync "$db"
check "the next sync without the fault converges" status_is 0
check "... the row synced" [ "$(state "$db" 10.1.0.0/16)" = synced ]
check "... created once on the server (no duplicate)" [ "$(server_cidr_count 10.1.0.0/16)" = 1 ]

# ---- a server that trickles every reply, default low-speed limit ----
db="$tmp/all.db"
start_server all || exit 1
"$RAMPART" --db "$db" rules create --cidr 10.2.0.0/16 --policy $P --action deny >/dev/null
"$RAMPART" --db "$db" sync >/dev/null 2>&1
"$RAMPART" --db "$db" rules create --cidr 10.3.0.0/16 --policy $P --action allow >/dev/null
start_server all --faults 'any:trickle=1000@1+' || exit 1
unset RAMPART_LOW_SPEED RAMPART_LOW_SPEED_TIME
timed_sync "$db"
check "every reply trickled, default limit: the sync ends in under $BOUND s (took ${took} s)" \
    took_under $BOUND
check "... not converged (exit 4)" status_is 4
check "... the report says timed_out" report_timed_out
check "... the queued row is still queued" \
    sh -c 's=$0; [ -n "$s" ] && [ "$s" != synced ]' "$(state "$db" 10.3.0.0/16)"
check "... the synced row is untouched" [ "$(state "$db" 10.2.0.0/16)" = synced ]
start_server all || exit 1
timed_sync "$db"
check "the next sync without the fault converges" status_is 0
check "... both rows synced" \
    [ "$(state "$db" 10.2.0.0/16) $(state "$db" 10.3.0.0/16)" = "synced synced" ]
check "... each rule once on the server (no duplicate, nothing lost)" \
    [ "$(server_cidr_count 10.2.0.0/16) $(server_cidr_count 10.3.0.0/16)" = "1 1" ]
check "... and nothing else there" [ "$(server_count ip_policy_rules)" = 2 ]
stop_server
checks_done
