#!/bin/sh
# Faults: for each fault of serve-api --faults on each kind of request, a sync
# converges with no duplicate on the server, no local edit lost and no credential
# left on the server without its token held here. The server is the witness.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
ops="create_rule create_cred delete_rule delete_cred list_rules list_creds"
kinds="drop reset truncate 500 502 429 429:retry-after=1 delay=200"

# Every credential on the server has its token on this machine.
tokens_held() {
    for id in $(server_ids credentials); do
        "$RAMPART" --db "$1" creds token "$id" >/dev/null 2>&1 || return 1
    done
}

i=0
for op in $ops; do
    for kind in $kinds; do
        i=$((i + 1))
        db="$tmp/client$i.db"
        fault="${kind%%:*}"
        extra=""
        case $kind in *:*) extra=":${kind#*:}" ;; esac
        spec="$op:$fault@1$extra"
        # A synced starting point: r1, r2 and c1 exist remotely.
        start_server "f$i" || continue
        "$RAMPART" --db "$db" rules create --cidr 10.1.0.0/16 --policy $P --action allow >/dev/null
        "$RAMPART" --db "$db" rules create --cidr 10.2.0.0/16 --policy $P --action deny >/dev/null
        "$RAMPART" --db "$db" creds create --description c1 >/dev/null
        "$RAMPART" --db "$db" sync >/dev/null 2>&1
        r1=$("$RAMPART" --db "$db" rules list --filter 10.1.0.0 | awk 'NR == 2 { print $1 }')
        c1=$("$RAMPART" --db "$db" creds list --filter c1 | awk 'NR == 2 { print $1 }')
        # Local edits of every kind, then the same server restarted with the fault.
        "$RAMPART" --db "$db" rules delete "$r1" >/dev/null
        "$RAMPART" --db "$db" creds delete "$c1" >/dev/null
        "$RAMPART" --db "$db" rules create --cidr 10.3.0.0/16 --policy $P --action allow >/dev/null
        "$RAMPART" --db "$db" creds create --description c2 >/dev/null
        start_server "f$i" --faults "$spec" || continue
        check "$spec: sync converges" sync_until_converged "$db"
        cidrs=$(server_list ip_policy_rules cidr | sort | tr '\n' ' ')
        check "$spec: server rules are exactly 10.2/16 and 10.3/16 (no duplicate, no loss)" \
            [ "$cidrs" = "10.2.0.0/16 10.3.0.0/16 " ]
        descs=$(server_list credentials description | sort | tr '\n' ' ')
        check "$spec: server credentials are exactly c2" [ "$descs" = "c2 " ]
        check "$spec: every server credential's token is held here" tokens_held "$db"
        run --db "$db" plan
        check "$spec: nothing left to do" out_has "Nothing to do"
    done
done

# A listing the server keeps refusing with 429: the sync stops, says why as a type
# (--json: the failure's kind, status and the wait asked for), and leaves the queue.
# It gives up after give_up_windows windows with nothing settled: 2 of 3 s here
# (the production window is 60 s).
export RAMPART_WINDOW=3
i=$((i + 1))
db="$tmp/client$i.db"
if start_server "f$i" --faults "list_rules:429@1+:retry-after=1"; then
    "$RAMPART" --db "$db" rules create --cidr 10.9.0.0/16 --policy $P --action allow >/dev/null
    run --db "$db" sync --pull-only --json
    check "listing always 429: not converged (exit 4)" status_is 4
    check "listing always 429: typed rate_limited, with the status and the wait" \
        out_has '"failure": {"kind": "rate_limited", "http_status": 429, .*"retry_after_s": 1, '
    check "listing always 429: about the rules' listing" \
        out_has '"object_kind": "rule", "object_id": ""}'
    run --db "$db" sync --pull-only
    check "listing always 429: the failure line names it" \
        err_has "failure: rate_limited (HTTP 429, .*retry after 1 s, listing rules)"
    run --db "$db" plan
    check "listing always 429: the create is still queued" out_has "Plan: 1 to create"
fi
unset RAMPART_WINDOW
checks_done
