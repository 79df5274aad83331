#!/bin/sh
# Crash safety: kill -9 a sync at random moments, restart, sync again; the server
# then matches the cache (no duplicate, nothing lost, no credential without its
# token here) and the database passes PRAGMA integrity_check.
# Each round also edits the previous round's first rule (cidr, description) and
# credential (ACL, description), so kills land during PATCHes too: the edits
# survive, reach the server, and the credential keeps its token.
# CRASH_ROUNDS (default 50) rounds; `make soak` runs more.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
rounds=${CRASH_ROUNDS:-50}
db="$tmp/crash.db"
# Slow creates and edits a little so a kill often lands while a request is in flight.
start_server crash --faults \
    "create_rule:delay=15@1+,create_cred:delay=15@1+,patch_rule:delay=15@1+,patch_cred:delay=15@1+" ||
    exit 1

held_tokens() {
    for id in $(server_ids credentials); do
        "$RAMPART" --db "$db" creds token "$id" >/dev/null 2>&1 || return 1
    done
}

# Hashes, never the token itself: the one held here, the one the server holds.
token_hash() { "$RAMPART" --db "$db" creds token "$1" 2>/dev/null | tr -d '\n' | sha256sum; }
server_token_hash() {
    sqlite3 "$tmp/crash.server.db" "SELECT token FROM tokens WHERE cred_id = '$1'" |
        tr -d '\n' | sha256sum
}
# The server's copy of an object has every "field":value piece given.
server_has() {
    obj=$(api GET "$1")
    shift
    for piece in "$@"; do
        case $obj in *"$piece"*) ;; *) return 1 ;; esac
    done
}
# Round R's /24s: 10.R.K.0 (11.R-256.K.0 past 255, for make soak).
net() { echo "$((10 + $1 / 256)).$(($1 % 256)).$2.0"; }

bad=0
edits_bad=0
mid_patch=0
r=0
while [ $r -lt "$rounds" ]; do
    r=$((r + 1))
    k=0
    while [ $k -lt 4 ]; do
        "$RAMPART" --db "$db" rules create --cidr "$(net $r $k)/24" --policy $P --action allow \
            >/dev/null
        k=$((k + 1))
    done
    "$RAMPART" --db "$db" creds create --description "$(printf 'crash-%03d' $r)" \
        --acl bind:a.example.com >/dev/null
    # Edits of the previous round's rows (synced by its last sync).
    er="" ec=""
    if [ $r -gt 1 ]; then
        p=$((r - 1))
        er=$("$RAMPART" --db "$db" rules list --filter "$(net $p 0)/24" | awk 'NR == 2 { print $1 }')
        ec=$("$RAMPART" --db "$db" creds list --filter "$(printf 'crash-%03d' $p)" |
            awk 'NR == 2 { print $1 }')
        eh=$(token_hash "$ec")
        "$RAMPART" --db "$db" rules update "$er" --cidr "$(net $p 0)/25" \
            --description "edited $p" >/dev/null
        "$RAMPART" --db "$db" creds update "$ec" --acl "bind:r$p.example.com" --acl bind:env=crash \
            --description "$(printf 'edited-%03d' $p)" >/dev/null
    fi
    "$RAMPART" --db "$db" sync >/dev/null 2>&1 &
    victim=$!
    # A random moment within the sync's first ~160 ms (the creates, then the edits).
    sleep "$(awk -v s="$r$$" 'BEGIN { srand(s); printf "0.%03d", int(rand() * 160) }')"
    kill -9 "$victim" 2>/dev/null
    wait "$victim" 2>/dev/null
    # Killed between the server's commit of the rule's PATCH and the cache's record
    # of its reply: the case the next sync must settle from the listing.
    if [ -n "$er" ] && "$RAMPART" --db "$db" rules get "$er" | grep -q '^state  *edited' &&
        server_has "/ip_policy_rules/$er" "\"cidr\":\"$(net $p 0)/25\""; then
        mid_patch=$((mid_patch + 1))
    fi
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
    if [ -n "$er" ] && ! {
        server_has "/ip_policy_rules/$er" "\"cidr\":\"$(net $p 0)/25\"" \
            "\"description\":\"edited $p\"" &&
            server_has "/credentials/$ec" "\"acl\":[\"bind:r$p.example.com\",\"bind:env=crash\"]" \
                "\"description\":\"$(printf 'edited-%03d' $p)\"" &&
            [ "$(token_hash "$ec")" = "$eh" ] && [ "$(server_token_hash "$ec")" = "$eh" ] &&
            "$RAMPART" --db "$db" rules get "$er" | grep -q '^state  *synced' &&
            "$RAMPART" --db "$db" creds get "$ec" | grep -q '^state  *synced'
    }; then
        edits_bad=$((edits_bad + 1))
        echo "# round $r: the edits of $er and $ec did not converge (or the token changed)"
        "$RAMPART" --db "$db" rules get "$er" | sed 's/^/#   /'
        "$RAMPART" --db "$db" creds get "$ec" | sed 's/^/#   /'
    fi
done
echo "# $mid_patch of $rounds kills landed after the server committed a rule's PATCH and before the cache recorded it"
check "kill -9 during sync, $rounds rounds: server and cache agree every time" [ $bad -eq 0 ]
check "kill -9 during sync with queued edits, $rounds rounds: every edit on the server, rows synced, tokens kept" \
    [ $edits_bad -eq 0 ]
check "after $rounds rounds: $((rounds * 4)) rules on the server" \
    [ "$(server_count ip_policy_rules)" -eq $((rounds * 4)) ]
checks_done
