#!/bin/sh
# make bench: the sync against serve-api over loopback, rate limit off (figures, not
# pass/fail), each against the transport measured in the same run:
# - pull: `rampart sync --pull-only` of BENCH_PULL_RULES rules (default 100,000)
#   into a fresh cache, against one curl process fetching the same pages (the
#   rules' pages, followed once beforehand to know their URLs, and the
#   credentials' page) over one keep-alive connection;
# - push: `rampart sync --push-only` of BENCH_PUSH_CREATES queued creates (default
#   5,000) into an empty server, against one curl process sending the same POSTs
#   with --next over one keep-alive connection.
# BENCH_SYNC_RUNS runs (default 3), rampart and curl taking turns so that each pair
# sees the same machine: the value and baseline are medians of the runs, the ratio
# the median of each pair's ratio (a busy machine moves both of a pair together).
# usage: tests/bench/sync.sh BUILD_DIR   (rampart inside)
set -eu
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
pull_rules=${BENCH_PULL_RULES:-100000}
push_creates=${BENCH_PUSH_CREATES:-5000}
runs=${BENCH_SYNC_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-sync.XXXXXX")
server_pid=""
stop_server() {
    [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || :; }
    server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT INT TERM
now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'; }
# run_pair FILE A_START A_END B_START B_END: "a b a/b" of one run into FILE.
run_pair() {
    awk -v a0="$2" -v a1="$3" -v b0="$4" -v b1="$5" \
        'BEGIN { a = a1 - a0; b = b1 - b0; printf "%.3f %.3f %.4f\n", a, b, a / b }' >>"$1"
}
# column N of FILE, median
col_median() { awk -v c="$1" '{ print $c }' "$2" | median; }
key=bench_key_$$
export RAMPART_SERVE_API_KEY=$key RAMPART_API_KEY=$key RAMPART_RATE=0

start_server() { # DB: a serve-api on a free port, no rate limit; sets $url
    rm -f "$work/ready"
    "$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$1" --ready-file "$work/ready" \
        2>/dev/null &
    server_pid=$!
    while [ ! -s "$work/ready" ]; do sleep 0.02; done # poll for the ready file
    url="http://$(cat "$work/ready")"
    export RAMPART_API_URL="$url"
}

# ---- pull -------------------------------------------------------------------
# The server's rules, written straight into its database (remote ids).
awk -v n="$pull_rules" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy\":{\"id\":\"ipp_bench%05d\"},\"action\":\"allow\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, int(i / 65536) % 256, int(i / 256) % 256, i % 256, i % 100;
    print "]" }' >"$work/server.json"
"$RAMPART" --db "$work/pull-server.db" rules import "$work/server.json" >/dev/null
start_server "$work/pull-server.db"
# The pages a pull fetches, as curl will fetch them: the rules' (their URLs from
# next_page_uri, followed once here, untimed) and the credentials' one.
next="$url/ip_policy_rules"
: >"$work/pages.cfg"
while [ -n "$next" ]; do
    printf 'url = "%s"\noutput = /dev/null\n' "$next" >>"$work/pages.cfg"
    next=$(curl -sS -H "Authorization: Bearer $key" -H "Service-Version: 2" "$next" |
        sed -n 's/.*"next_page_uri":"\([^"]*\)".*/\1/p')
done
printf 'url = "%s"\noutput = /dev/null\n' "$url/credentials" >>"$work/pages.cfg"
pages=$(grep -c '^url' "$work/pages.cfg")
: >"$work/pull.runs"
i=0
while [ $i -lt "$runs" ]; do
    rm -f "$work"/pull-client.db*
    t0=$(now)
    "$RAMPART" --db "$work/pull-client.db" sync --pull-only >/dev/null
    t1=$(now)
    curl -sS -H "Authorization: Bearer $key" -H "Service-Version: 2" -K "$work/pages.cfg"
    t2=$(now)
    run_pair "$work/pull.runs" "$t0" "$t1" "$t1" "$t2"
    i=$((i + 1))
done
stop_server
pulled=$(sqlite3 "$work/pull-client.db" "SELECT count(*) FROM rules WHERE state = 'synced'")
bench_row "pull $pull_rules rules, fresh cache, s" "$(col_median 1 "$work/pull.runs")" \
    "$(col_median 2 "$work/pull.runs")" "$(col_median 3 "$work/pull.runs")" \
    "ratio <= 1.2 (baseline: one keep-alive curl over the same $pages pages; medians of $runs runs)"
bench_row "... rules in the cache" "$pulled" "$pull_rules" "" "= $pull_rules, synced"

# ---- push -------------------------------------------------------------------
awk -v n="$push_creates" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"cidr\":\"10.%d.%d.0/24\",\"ip_policy_id\":\"ipp_push\",\"action\":\"deny\"}",
            (i ? ",\n" : ""), int(i / 256) % 256, i % 256;
    print "]" }' >"$work/push.json"
"$RAMPART" --db "$work/push-queued.db" rules import "$work/push.json" >/dev/null
# The same POSTs for curl, one keep-alive connection (--next between them); the
# URL is filled in per server.
awk -v n="$push_creates" -v k="$key" 'BEGIN {
    for (i = 0; i < n; i++) {
        if (i) print "next";
        printf "url = \"URL/ip_policy_rules\"\nsilent\noutput = /dev/null\n";
        printf "header = \"Authorization: Bearer %s\"\nheader = \"Service-Version: 2\"\n", k;
        printf "header = \"Content-Type: application/json\"\n";
        printf "data = \"{\\\"cidr\\\":\\\"10.%d.%d.0/24\\\",\\\"ip_policy_id\\\":\\\"ipp_push\\\",\\\"action\\\":\\\"deny\\\"}\"\n",
            int(i / 256) % 256, i % 256;
    } }' >"$work/push.cfg.in"
: >"$work/push.runs"
i=0
while [ $i -lt "$runs" ]; do
    rm -f "$work"/push-client.db* "$work"/push-server*.db*
    cp "$work/push-queued.db" "$work/push-client.db"
    start_server "$work/push-server-a.db"
    t0=$(now)
    "$RAMPART" --db "$work/push-client.db" sync --push-only >/dev/null
    t1=$(now)
    stop_server
    start_server "$work/push-server-b.db"
    sed "s|URL|$url|" "$work/push.cfg.in" >"$work/push.cfg"
    t2=$(now)
    curl -K "$work/push.cfg"
    t3=$(now)
    stop_server
    run_pair "$work/push.runs" "$t0" "$t1" "$t2" "$t3"
    i=$((i + 1))
done
created=$(sqlite3 "$work/push-server-a.db" "SELECT count(*) FROM rules")
bench_row "push $push_creates creates, s" "$(col_median 1 "$work/push.runs")" \
    "$(col_median 2 "$work/push.runs")" "$(col_median 3 "$work/push.runs")" \
    "ratio <= 1.5 (baseline: one keep-alive curl --next, the same POSTs; medians of $runs runs)"
bench_row "... rules on the server" "$created" "$push_creates" "" "= $push_creates"
bench_done
