#!/bin/sh
# Faults on edits in place: for each fault of serve-api --faults on the PATCH of a
# rule and of a credential (and on the GET that confirms an ambiguous PATCH), queued
# edits sync with no edit lost, nothing changed twice, no object created or deleted,
# every token kept and the local rows synced. The server is the witness: its
# objects are read with curl, its request log counts what was sent, its database
# holds the tokens (compared here as hashes; a token is never printed).
# One server per fault, both kinds at once (a rule and a credential edited).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
kinds="drop reset truncate 500 502 429 429:retry-after=1 delay=200"

# Hashes, never the token itself: the one this machine holds, the server's.
local_token_hash() { "$RAMPART" --db "$1" creds token "$2" 2>/dev/null | tr -d '\n' | sha256sum; }
server_token_hash() {
    sqlite3 "$1" "SELECT token FROM tokens WHERE cred_id = '$2'" | tr -d '\n' | sha256sum
}

# The server's copy of one object has all the given "field":value pieces (compact
# JSON as serve-api writes it).
server_has() {
    obj=$(api GET "$1")
    shift
    for piece in "$@"; do
        case $obj in *"$piece"*) ;; *) return 1 ;; esac
    done
}

# Lines of the server log after line $2 of file $1.
log_since() { tail -n +"$(($2 + 1))" "$1"; }
# How many requests matching the extended regex $3 in that part of the log.
log_count() { log_since "$1" "$2" | grep -c -E "$3"; }
# The checks below read the globals of the current row: $log and $from (the
# server log since the fault server started), $r1 $r2 $c1 $c2, $t1 $t2 (token
# hashes before), $db, $sdb (the server's database), $hit_rule and $hit_cred.
# The server marks a fault that acts after the work (fault=KIND); a refusal is
# only its status.
fault_hit() {
    hit=" ([0-9]+ .*fault=|(429|500|502) |[0-9]+ [0-9]{3,}\.[0-9]ms)" # delay: >= 100 ms
    [ "$(log_count "$log" "$from" "$hit_rule$r1$hit")" -ge 1 ] &&
        [ "$(log_count "$log" "$from" "$hit_cred$c1$hit")" -ge 1 ]
}
edits_on_server() {
    server_has "/ip_policy_rules/$r1" '"cidr":"10.1.0.0/24"' '"description":"r1 edited"' &&
        server_has "/credentials/$c1" '"acl":["bind:b.example.com","bind:env=prod"]' \
            '"description":"cred-one edited"'
}
others_untouched() {
    server_has "/ip_policy_rules/$r2" '"cidr":"10.2.0.0/16"' '"description":"r2"' &&
        server_has "/credentials/$c2" '"acl":["bind:keep.example.com"]' '"description":"cred-two"'
}
same_objects() {
    [ "$(server_list ip_policy_rules cidr | sort | tr '\n' ' ')" = "10.1.0.0/24 10.2.0.0/16 " ] &&
        [ "$(server_ids credentials | sort | tr '\n' ' ')" = \
            "$(printf '%s\n' "$c1" "$c2" | sort | tr '\n' ' ')" ] &&
        [ "$(log_count "$log" "$from" "^(POST|DELETE) ")" -eq 0 ]
}
# No object took more than 2 committed PATCHes (the one the fault hit and one
# repeat), and none but r1 and c1 took any.
patches_ok() {
    [ "$(log_count "$log" "$from" "^PATCH /ip_policy_rules/$r1 200 ")" -le 2 ] &&
        [ "$(log_count "$log" "$from" "^PATCH /credentials/$c1 200 ")" -le 2 ] &&
        [ "$(log_count "$log" "$from" "^PATCH ")" -eq \
            "$(log_count "$log" "$from" "^PATCH /(ip_policy_rules/$r1|credentials/$c1) ")" ]
}
tokens_kept() {
    [ "$(local_token_hash "$db" "$c1")" = "$t1" ] &&
        [ "$(local_token_hash "$db" "$c2")" = "$t2" ] &&
        [ "$(server_token_hash "$sdb" "$c1")" = "$t1" ] &&
        [ "$(server_token_hash "$sdb" "$c2")" = "$t2" ]
}
original_on_server() {
    server_has "/ip_policy_rules/$r1" '"cidr":"10.1.0.0/16"' '"description":"r1"' &&
        server_has "/credentials/$c1" '"acl":["bind:a.example.com"]' '"description":"cred-one"'
}
start_ok() {
    [ -n "$r1" ] && [ -n "$r2" ] && [ -n "$c1" ] && [ -n "$c2" ] && [ "$c1" != "$c2" ] &&
        [ "$r1" != "$r2" ] && [ "$(server_count ip_policy_rules)" -eq 2 ] &&
        [ "$(server_count credentials)" -eq 2 ] &&
        [ "$("$RAMPART" --db "$db" plan | grep -c '^~ ')" -eq 2 ]
}
both_queued() { out_has "^~ rule $r1" && out_has "^~ cred $c1"; }
cred_synced() { out_has "^state  *synced" && out_lacks "^edit"; }
quiet_since() { # LINE: the sync succeeded and wrote nothing after that log line
    [ "$status" -eq 0 ] && [ "$(log_count "$log" "$1" "^(PATCH|POST|DELETE) ")" -eq 0 ]
}

# synced_start I: server eI and a cache with r1, r2, c1 and c2 synced to it, then
# edits queued on r1 (cidr, description) and c1 (ACL, description).
synced_start() {
    db="$tmp/client$1.db"
    log="$tmp/e$1.server.log"
    sdb="$tmp/e$1.server.db"
    # A synced starting point: r1, r2, c1 and c2 exist remotely.
    start_server "e$1" || return 1
    "$RAMPART" --db "$db" rules create --cidr 10.1.0.0/16 --policy $P --action allow \
        --description r1 >/dev/null
    "$RAMPART" --db "$db" rules create --cidr 10.2.0.0/16 --policy $P --action deny \
        --description r2 >/dev/null
    "$RAMPART" --db "$db" creds create --description cred-one --acl bind:a.example.com >/dev/null
    "$RAMPART" --db "$db" creds create --description cred-two --acl bind:keep.example.com >/dev/null
    "$RAMPART" --db "$db" sync >/dev/null 2>&1
    r1=$("$RAMPART" --db "$db" rules list --filter 10.1.0.0 | awk 'NR == 2 { print $1 }')
    r2=$("$RAMPART" --db "$db" rules list --filter 10.2.0.0 | awk 'NR == 2 { print $1 }')
    # (names with a dash: a filter also matches ids, and an id may hold "c2")
    c1=$("$RAMPART" --db "$db" creds list --filter cred-one | awk 'NR == 2 { print $1 }')
    c2=$("$RAMPART" --db "$db" creds list --filter cred-two | awk 'NR == 2 { print $1 }')
    t1=$(local_token_hash "$db" "$c1")
    t2=$(local_token_hash "$db" "$c2")
    # Queued edits: a rule's cidr and description, a credential's ACL and description.
    run --db "$db" rules update "$r1" --cidr 10.1.0.0/24 --description "r1 edited"
    run --db "$db" creds update "$c1" --acl bind:b.example.com --acl bind:env=prod \
        --description "cred-one edited"
    check "$row: start: 4 objects synced, both edits queued" start_ok
}

# edit_row WHERE KIND I: one server, one fault, every check of it.
edit_row() {
    where=$1
    kind=$2
    i=$3
    fault="${kind%%:*}"
    extra=""
    case $kind in *:*) extra=":${kind#*:}" ;; esac
    if [ "$where" = patch ]; then
        spec="patch_rule:$fault@1$extra,patch_cred:$fault@1$extra"
        hit_rule="^PATCH /ip_policy_rules/"
        hit_cred="^PATCH /credentials/"
    else
        # A cut reply makes the PATCH ambiguous: the GET that confirms it is hit.
        spec="patch_rule:truncate@1,patch_cred:truncate@1,get_rule:$fault@1$extra,get_cred:$fault@1$extra"
        hit_rule="^GET /ip_policy_rules/"
        hit_cred="^GET /credentials/"
    fi
    row="$where $kind"
    synced_start "$i" || return 1
    # The same server again, with the fault; its log from here on.
    from=$(wc -l <"$log")
    start_server "e$i" --faults "$spec" || return 1
    check "$row: sync converges" sync_until_converged "$db"
    check "$row: the fault hit the rule's and the credential's request" fault_hit
    check "$row: the server has both edits (cidr, description; ACL, description)" \
        edits_on_server
    check "$row: objects not edited are as they were" others_untouched
    check "$row: no object created or deleted (server and log)" same_objects
    check "$row: no double change (PATCHes only for r1 and c1, <= 2 committed each)" \
        patches_ok
    check "$row: tokens unchanged here and held by the server" tokens_kept
    run --db "$db" rules list --filter 10.1.0.0/24
    check "$row: the local rule is synced with its edit" out_has "^$r1  *synced "
    run --db "$db" creds get "$c1"
    check "$row: the local credential is synced with its edit" cred_synced
    again=$(wc -l <"$log")
    run --db "$db" sync
    check "$row: nothing left to do (another sync sends no request that writes)" \
        quiet_since "$again"
    stop_server
}

# always_row I: every PATCH refused (500) for good: the sync says it did not
# converge, the edits stay queued here and the server unchanged; once the server
# accepts again, the next sync sends them.
always_row() {
    row="PATCH always 500"
    synced_start "$1" || return 1
    start_server "e$1" --faults "patch_rule:500@1+,patch_cred:500@1+" || return 1
    run --db "$db" sync
    check "$row: not converged (exit 4)" status_is 4
    check "$row: the server is unchanged" original_on_server
    run --db "$db" plan
    check "$row: both edits still queued (plan: ~ rule and ~ cred)" both_queued
    start_server "e$1" || return 1
    check "$row: then without the fault: sync converges" sync_until_converged "$db"
    check "$row: ... the server has both edits" edits_on_server
    check "$row: ... tokens unchanged here and held by the server" tokens_kept
    stop_server
}

# The rows run side by side (each is mostly waiting: backoffs, Retry-After, delays),
# each in its own directory (lib.sh's $tmp/out and the server files are per row),
# and print in order once all are done.
base=$tmp
i=0
for where in patch get; do
    for kind in $kinds; do
        i=$((i + 1))
        (
            tmp=$base/row$i
            mkdir -p "$tmp"
            server_pid="" # the parent's server is not this row's
            edit_row $where "$kind" $i
        ) >"$base/row$i.txt" 2>&1 &
    done
done
i=$((i + 1))
(
    tmp=$base/row$i
    mkdir -p "$tmp"
    server_pid=""
    always_row $i
) >"$base/row$i.txt" 2>&1 &
wait
# The rows run in subshells of their own, so their checks are not counted here:
# the plan says how many they print (each fault's row, and the always-refused one).
plan 183
j=0
while [ $j -lt $i ]; do
    j=$((j + 1))
    cat "$base/row$j.txt"
done
checks_done
