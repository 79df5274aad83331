#!/bin/sh
# Crash safety: kill -9 a sync at random moments, restart, sync again; the server
# then matches the cache (no duplicate, nothing lost, no credential without its
# token here) and the database passes PRAGMA integrity_check.
# CRASH_ROUNDS (default 50) rounds; `make soak` runs more.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
rounds=${CRASH_ROUNDS:-50}
db="$tmp/crash.db"
# Slow creates a little so a kill often lands while a request is in flight.
start_server crash --faults "create_rule:delay=15@1+,create_cred:delay=15@1+" || exit 1

held_tokens() {
    for id in $(server_ids credentials); do
        "$RAMPART" --db "$db" creds token "$id" >/dev/null 2>&1 || return 1
    done
}

bad=0
r=0
while [ $r -lt "$rounds" ]; do
    r=$((r + 1))
    k=0
    while [ $k -lt 4 ]; do
        "$RAMPART" --db "$db" rules create --cidr "10.$r.$k.0/24" --policy $P --action allow \
            >/dev/null
        k=$((k + 1))
    done
    "$RAMPART" --db "$db" creds create --description "crash $r" >/dev/null
    "$RAMPART" --db "$db" sync >/dev/null 2>&1 &
    victim=$!
    # A random moment within the sync's first ~120 ms.
    sleep "$(awk -v s="$r$$" 'BEGIN { srand(s); printf "0.%03d", int(rand() * 120) }')"
    kill -9 "$victim" 2>/dev/null
    wait "$victim" 2>/dev/null
    "$RAMPART" --db "$db" sync >"$tmp/out" 2>"$tmp/err" ||
        "$RAMPART" --db "$db" sync >"$tmp/out" 2>"$tmp/err"
    status=$?
    local_cidrs=$("$RAMPART" --db "$db" rules list | awk 'NR > 1 { print $5 }' | sort | tr '\n' ' ')
    remote_cidrs=$(server_list ip_policy_rules cidr | sort | tr '\n' ' ')
    integrity=$(sqlite3 "$db" "PRAGMA integrity_check")
    if [ $status -ne 0 ] || [ "$local_cidrs" != "$remote_cidrs" ] || ! held_tokens ||
        [ "$integrity" != ok ] ||
        [ "$(server_count credentials)" -ne "$r" ]; then
        bad=$((bad + 1))
        echo "# round $r: status $status integrity $integrity"
        echo "#   local:  $local_cidrs"
        echo "#   remote: $remote_cidrs"
    fi
done
check "kill -9 during sync, $rounds rounds: server and cache agree every time" [ $bad -eq 0 ]
check "after $rounds rounds: $((rounds * 4)) rules on the server" \
    [ "$(server_count ip_policy_rules)" -eq $((rounds * 4)) ]
