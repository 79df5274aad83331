#!/bin/sh
# make bench: the look before each write (figures, not pass/fail), against
# serve-api over loopback, rate limit off; the server's request log counts.
# - requests for one field edited in an account of BENCH_LOOK_RULES rules (default
#   10,000): `rules update ID --description x --sync`, and `rules update` then
#   `sync --push-only`; the minimum is 2 (the look and the PATCH), whatever the
#   account's size;
# - requests per intent, with their minimum and the time at the budget's pace:
#   one edit + sync, an idle sync, apply --sync of one changed line at 100,000
#   rules and of 5,000 new CIDRs; and `rampart check` of one address at 100,000
#   rules against `rampart --version` (whole processes);
# - two admins racing: two caches edit the same 6 rules with different
#   descriptions, then sync unpaced, the second sync started 0, 3, 6 ... 33 ms
#   after the first (12 rounds), then each syncs again. A pair (a rule in a round)
#   ends either as a conflict on at least one side, or silently overwritten (one
#   side's value won and neither cache says so). The API has no conditional
#   update: only a write that crosses another within one round trip can be lost.
# usage: tests/bench/fresh_look.sh BUILD_DIR   (rampart inside)
set -eu
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
n=${BENCH_LOOK_RULES:-10000}
rounds=${BENCH_LOOK_ROUNDS:-12}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-look.XXXXXX")
server_pid=""
stop_server() {
    [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || :; }
    server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT INT TERM
key=bench_key_$$
export RAMPART_SERVE_API_KEY=$key RAMPART_API_KEY=$key RAMPART_RATE=0
log="$work/server.log"

start_server() { # DB: a serve-api on a free port, no rate limit; sets $url
    rm -f "$work/ready"
    "$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$1" --ready-file "$work/ready" \
        2>>"$log" &
    server_pid=$!
    while [ ! -s "$work/ready" ]; do sleep 0.02; done # poll for the ready file
    url="http://$(cat "$work/ready")"
    export RAMPART_API_URL="$url"
}
lines() { wc -l <"$log"; }
# requests_since MARK: how many requests the server logged after MARK, once the
# last reply's line has landed (polled: the server logs after replying).
requests_since() {
    want=$2
    tries=0
    while [ "$(($(lines) - $1))" -lt "$want" ] && [ $tries -lt 100 ]; do
        tries=$((tries + 1))
        sleep 0.01
    done
    echo $(($(lines) - $1))
}

# ---- requests per edit in a large account -------------------------------------
awk -v n="$n" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy\":{\"id\":\"ipp_look%05d\"},\"action\":\"allow\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, int(i / 65536) % 256, int(i / 256) % 256, i % 256, i % 10;
    print "]" }' >"$work/server.json"
"$RAMPART" --db "$work/server.db" rules import "$work/server.json" >/dev/null
start_server "$work/server.db"
"$RAMPART" --db "$work/c.db" sync --pull-only >/dev/null
id=$(printf 'ipr_%027d' 4242)

m=$(lines)
"$RAMPART" --db "$work/c.db" rules update "$id" --description x --sync >/dev/null 2>&1
by_flag=$(requests_since "$m" 2)
m=$(lines)
"$RAMPART" --db "$work/c.db" rules update "$id" --description y >/dev/null
"$RAMPART" --db "$work/c.db" sync --push-only >/dev/null
by_push=$(requests_since "$m" 2)
pages=$(( (n + 99) / 100 + 1 ))
bench_row "one edit, $n rules: update --sync, requests" "$by_flag" 2 \
    "$(bench_ratio "$by_flag" 2)" "= 2: the look and the PATCH (a listing: $pages pages)"
bench_row "one edit, $n rules: sync --push-only, requests" "$by_push" 2 \
    "$(bench_ratio "$by_push" 2)" "= 2 (before the look: 1 PATCH, unsafe)"
# at_pace N: the time N requests take at the default budget (120 a minute, 80%).
at_pace() { awk -v n="$1" 'BEGIN { printf "%.0f s at the budget'"'"'s pace", n / 1.6 }'; }
m=$(lines)
"$RAMPART" --db "$work/c.db" rules update "$id" --description z >/dev/null
"$RAMPART" --db "$work/c.db" sync >/dev/null
want=$((2 + pages))
by_sync=$(requests_since "$m" "$want")
bench_row "one edit + sync, $n rules, requests" "$by_sync" "$want" \
    "$(bench_ratio "$by_sync" "$want")" "= 2 + one listing of $pages pages ($(at_pace "$by_sync"))"
m=$(lines)
"$RAMPART" --db "$work/c.db" sync >/dev/null
idle=$(requests_since "$m" "$pages")
bench_row "sync with nothing to push, $n rules, requests" "$idle" "$pages" \
    "$(bench_ratio "$idle" "$pages")" "= one listing (no conditional GET in the API; $(at_pace "$idle"))"
stop_server

# ---- apply --sync in a policy of BENCH_LOOK_APPLY_RULES rules (default 100,000) ----
an=${BENCH_LOOK_APPLY_RULES:-100000}
AP=ipp_applybench000000000000001
awk -v n="$an" -v p="$AP" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"deny\",\"metadata\":\"{\\\"rampart_apply\\\":\\\"feed\\\"}\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, int(i / 65536) % 256, int(i / 256) % 256, i % 256, p;
    print "]" }' >"$work/apply-server.json"
"$RAMPART" --db "$work/apply-server.db" rules import "$work/apply-server.json" >/dev/null
: >"$log"
start_server "$work/apply-server.db"
"$RAMPART" --db "$work/ac.db" sync --pull-only >/dev/null
awk -v n="$an" 'BEGIN { for (i = 0; i < n; i++)
    printf "10.%d.%d.%d\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' |
    sed '1s/.*/192.0.2.1/' >"$work/feed.txt"
m=$(lines)
"$RAMPART" --db "$work/ac.db" apply --policy "$AP" --action deny --name feed --sync \
    "$work/feed.txt" >"$work/apply1.out" 2>&1
planned=$(sed -n 's/^Requests: \([0-9]*\) .*/\1/p' "$work/apply1.out")
one_line=$(requests_since "$m" 2)
bench_row "apply --sync, one line changed, $an rules, requests" "$one_line" 2 \
    "$(bench_ratio "$one_line" 2)" "= 2, as its plan said ($planned): the look and the PATCH ($(at_pace "$one_line"))"
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "172.%d.%d.0/24\n", 16 + int(i / 256), i % 256 }' \
    >"$work/new.txt"
m=$(lines)
t0=$(date +%s.%N)
"$RAMPART" --db "$work/ac.db" apply --policy "$AP" --action allow --name new --sync \
    "$work/new.txt" >"$work/apply2.out" 2>&1
t1=$(date +%s.%N)
planned=$(sed -n 's/^Requests: \([0-9]*\) .*/\1/p' "$work/apply2.out")
creates=$(requests_since "$m" 5000)
bench_row "apply --sync, 5000 new CIDRs, requests" "$creates" 5000 \
    "$(bench_ratio "$creates" 5000)" "= 5000 POSTs, as its plan said ($planned); unpaced $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $(at_pace "$creates")"
stop_server

# ---- rampart check of one address in that policy, against rampart --version ----
# Whole-process times, the two commands taking turns, medians of 21 runs each.
ms_of() { # CMD...: the command's wall time in ms
    a=$(date +%s%N)
    "$@" >/dev/null 2>&1 || : # check exits 1 for a denied address
    b=$(date +%s%N)
    echo $(((b - a) / 1000))
}
i=0
while [ $i -lt 21 ]; do
    ms_of "$RAMPART" --db "$work/ac.db" check "$AP" 10.0.3.7 >>"$work/check.us"
    ms_of "$RAMPART" --version >>"$work/version.us"
    i=$((i + 1))
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'; }
c=$(med "$work/check.us")
v=$(med "$work/version.us")
bench_row "rampart check, one address, $an rules, ms" "$c" "$v" "$(bench_ratio "$c" "$v")" \
    "ratio <= 2 (baseline: rampart --version; whole processes, medians of 21 turns)"

# ---- two admins racing ----------------------------------------------------------
: >"$log"
start_server "$work/race.db"
A="$work/a.db"
B="$work/b.db"
P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
i=1
while [ $i -le 6 ]; do
    "$RAMPART" --db "$A" rules create --cidr "192.0.2.$((i * 8))/29" --policy $P \
        --action allow --description start >/dev/null
    i=$((i + 1))
done
"$RAMPART" --db "$A" sync >/dev/null
"$RAMPART" --db "$B" sync >/dev/null
ids=$("$RAMPART" --db "$A" rules list -o name)
conflicts_of() { sqlite3 "$1" "SELECT id FROM rules WHERE state = 'conflict'"; }
silent=0
crossed=0
round=0
while [ $round -lt "$rounds" ]; do
    for r in $ids; do
        "$RAMPART" --db "$A" rules update "$r" --description "a$round" >/dev/null
        "$RAMPART" --db "$B" rules update "$r" --description "b$round" >/dev/null
    done
    offset=$(awk -v r="$round" 'BEGIN { printf "%.3f", r * 0.003 }')
    "$RAMPART" --db "$A" sync >"$work/a.out" 2>&1 &
    first=$!
    sleep "$offset"
    "$RAMPART" --db "$B" sync >"$work/b.out" 2>&1 &
    second=$!
    wait $first || :
    wait $second || :
    "$RAMPART" --db "$A" sync >/dev/null 2>&1 || :
    "$RAMPART" --db "$B" sync >/dev/null 2>&1 || :
    { conflicts_of "$A"; conflicts_of "$B"; } | sort -u >"$work/conflicts"
    for r in $ids; do
        if grep -qx "$r" "$work/conflicts"; then
            crossed=$((crossed + 1))
        else
            silent=$((silent + 1))
        fi
    done
    # Settle for the next round: the server's values on both sides.
    for db in "$A" "$B"; do
        for r in $(conflicts_of "$db"); do
            "$RAMPART" --db "$db" rules resolve "$r" --take-remote >/dev/null
        done
        "$RAMPART" --db "$db" sync >/dev/null 2>&1 || :
    done
    round=$((round + 1))
done
pairs=$((rounds * 6))
bench_row "two admins, $pairs crossing edits: silent" "$silent" "$pairs" \
    "$(bench_ratio "$silent" "$pairs")" "<= 1/6 silently overwritten (before the look: 72 of 72)"
bench_row "... became conflicts (seen on a side)" "$crossed" "$pairs" \
    "$(bench_ratio "$crossed" "$pairs")" "the rest: each one shown, nothing lost"
bench_done
