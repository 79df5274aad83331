#!/bin/sh
# make bench: an ACL change queued on 1,000 credentials (figures, not pass/fail).
# 1,000 credentials are created and synced against serve-api over loopback, then
# `rampart creds update ID --acl ...` runs once per credential (one process each:
# the CLI edits one id per call), then one sync. The server's request log counts
# what that sync sent, by method; the target is exactly 1,000 PATCHes plus the
# listing's pages, no create, no delete, no token changed (every token's hash, in
# the cache and in the server's database, before and after; tokens never printed).
# Baseline: the same 1,000 PATCHes from one curl process (keep-alive).
# usage: tests/bench/edit.sh BUILD_DIR   (rampart inside)
set -eu
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
n=${BENCH_EDIT_CREDS:-1000}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-edit.XXXXXX")
server_pid=""
cleanup() {
    [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
now() { date +%s.%N; }
key=bench_key_$$
export RAMPART_SERVE_API_KEY=$key RAMPART_API_KEY=$key RAMPART_RATE=0
db="$work/client.db"
sdb="$work/server.db"
log="$work/server.log"

"$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$sdb" --ready-file "$work/ready" \
    2>"$log" &
server_pid=$!
while [ ! -s "$work/ready" ]; do sleep 0.02; done # poll for the ready file
url="http://$(cat "$work/ready")"
export RAMPART_API_URL="$url"

i=0
while [ $i -lt "$n" ]; do
    "$RAMPART" --db "$db" creds create --description "$(printf 'bench-%04d' $i)" \
        --acl bind:a.example.com >/dev/null
    i=$((i + 1))
done
"$RAMPART" --db "$db" sync >/dev/null

# Every (id, token) pair, hashed as one; the cache's and the server's.
tokens_hash() { sqlite3 "$1" "SELECT cred_id || ' ' || token FROM tokens ORDER BY cred_id" | sha256sum; }
tokens_before=$(tokens_hash "$db")
ids=$("$RAMPART" --db "$db" creds list | awk 'NR > 1 { print $1 }')

t0=$(now)
for id in $ids; do
    "$RAMPART" --db "$db" creds update "$id" --acl bind:b.example.com --acl bind:env=bench \
        >/dev/null
done
t1=$(now)
edited=$("$RAMPART" --db "$db" creds list | awk 'NR > 1 && $2 == "edited"' | wc -l)

from=$(wc -l <"$log")
t2=$(now)
"$RAMPART" --db "$db" sync >/dev/null
t3=$(now)
sleep 0.2 # the server logs a request after replying: let the last line land
tail -n +"$((from + 1))" "$log" >"$work/sync.log"
count() { grep -c -E "$1" "$work/sync.log" || true; }
patches=$(count "^PATCH /credentials/cr_[^ ]* 200 ")
patches_all=$(count "^PATCH ")
posts=$(count "^POST ")
deletes=$(count "^DELETE ")
pages=$(count "^GET /(credentials|ip_policy_rules)[? ]")
gets=$(count "^GET ")
others=$(($(wc -l <"$work/sync.log") - patches_all - posts - deletes - gets))

tokens_after=$(tokens_hash "$db")
tokens_server=$(tokens_hash "$sdb")
tokens_changed=0
[ "$tokens_after" = "$tokens_before" ] && [ "$tokens_server" = "$tokens_before" ] ||
    tokens_changed="some"
synced=$("$RAMPART" --db "$db" creds list | awk 'NR > 1 && $2 == "synced"' | wc -l)
# The server as witness: credentials carrying the new ACL, over all pages.
on_server=0
next="$url/credentials?limit=100"
while [ -n "$next" ]; do
    page=$(curl -sS -H "Authorization: Bearer $key" -H "Service-Version: 2" "$next")
    c=$(printf '%s\n' "$page" | grep -o '"acl":\["bind:b.example.com","bind:env=bench"\]' |
        wc -l)
    on_server=$((on_server + c))
    next=$(printf '%s\n' "$page" | sed -n 's/.*"next_page_uri":"\([^"]*\)".*/\1/p')
done

# Baseline: the same PATCHes from one curl process, keep-alive.
for id in $ids; do
    printf 'url = "%s/credentials/%s"\nsilent\noutput = /dev/null\nrequest = PATCH\n' "$url" "$id"
    printf 'header = "Authorization: Bearer %s"\nheader = "Service-Version: 2"\n' "$key"
    printf 'header = "Content-Type: application/json"\n'
    printf 'data = "{\\"acl\\":[\\"bind:b.example.com\\",\\"bind:env=bench\\"]}"\nnext\n'
done | sed '$d' >"$work/curl-patch.cfg"
t4=$(now)
curl -K "$work/curl-patch.cfg"
t5=$(now)

sync_s=$(awk -v a="$t2" -v b="$t3" 'BEGIN { printf "%.2f", b - a }')
curl_s=$(awk -v a="$t4" -v b="$t5" 'BEGIN { printf "%.2f", b - a }')
update_ms=$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) * 1000 / n }')
bench_row "ACL edit of $n credentials, sync s" "$sync_s" "$curl_s" "$(bench_ratio "$sync_s" "$curl_s")" \
    "(baseline: one curl process, $n keep-alive PATCHes)"
bench_row "... requests: PATCH" "$patches" "$n" "" \
    "= $n ($edited rows edited; other requests: $pages listing pages, $((gets - pages)) GETs of one object, $others else)"
bench_row "... requests: POST / DELETE" "$posts / $deletes" "" "" "0 / 0"
bench_row "... tokens changed (cache, server)" "$tokens_changed" "" "" \
    "0 ($n tokens hashed before and after)"
bench_row "... credentials with the new ACL" "$on_server" "$n" "" \
    "= $n on the server ($synced synced in the cache)"
bench_row "rampart creds update, ms per call" "$update_ms" "" "" "($n calls, one id each)"
bench_done
