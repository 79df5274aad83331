#!/bin/sh
# make bench: the sync's pacing under the account's budget (figures, not pass/fail).
# serve-api enforces a rolling budget like the production service (429 without
# Retry-After), shortened so the runs take seconds: 100 requests per 10 s, for every
# client of the account together. rampart's budget matches it (RAMPART_RATE=100,
# RAMPART_WINDOW=10). The server's log line names each request's client (its
# User-Agent), so requests and 429s are counted per client from the log.
#   a) 500 queued creates, one sync, RAMPART_SHARE=100: 429s (target 0), requests
#      sent (target: the changes plus the listing's pages, nothing else), wall time
#      against 50 s (500 requests at 10/s; target ratio <= 1.15).
#   b) two rampart processes on one cache, each queueing 250 creates and syncing,
#      started at once (share 100%): 429s (target <= 3), each process's time and
#      exit status (target: both done within 1.25 x 50 s), what reached the server.
#      A cache allows one sync at a time (store_sync_lock_take): the second sync
#      waits for the first (said on stderr), then sends what is left. A rampart
#      that refuses it instead (exit 4, "another sync of this database is
#      running", as before) is retried every 0.5 s as a script would; the
#      refusals are counted.
#   c) the default share (80%) while another client (curl, 2 requests a second,
#      steady: 20% of the budget) lists rules: its 429s (target 0) and rampart's
#      (target <= 5), rampart's pace against 8 requests a second.
# Each sync is cut at BENCH_PACING_CAP seconds (default 100, twice the budget's
# time for a and b), so a pacer that ignores the window cannot stall make bench.
# usage: tests/bench/pacing.sh BUILD_DIR   (rampart inside; or RAMPART=path)
set -eu
. "$(dirname "$0")/table.sh"
if [ -n "${RAMPART:-}" ]; then
    RAMPART=$(cd "$(dirname "$RAMPART")" && pwd)/$(basename "$RAMPART")
else
    RAMPART="$(cd "${1:?usage: pacing.sh BUILD_DIR}" && pwd)/rampart"
fi
cap=${BENCH_PACING_CAP:-100}
n_a=${BENCH_PACING_CHANGES:-500}
n_c=${BENCH_PACING_SHARED_CHANGES:-300}
base_s=$(awk -v n="$n_a" 'BEGIN { print n / 10 }') # n requests at 100 per 10 s
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-pacing.XXXXXX")
server_pid=""
other_pid=""
stop_server() {
    [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; }
    server_pid=""
}
cleanup() {
    [ -z "$other_pid" ] || kill "$other_pid" 2>/dev/null || true
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
key=bench_key_$$
unset RAMPART_DB RAMPART_CONFIG RAMPART_SHARE RAMPART_TIMEOUT RAMPART_GIVE_UP_WINDOWS
export RAMPART_SERVE_API_KEY=$key RAMPART_API_KEY=$key RAMPART_RATE=100 RAMPART_WINDOW=10
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" XDG_DATA_HOME="$work/home/data"
mkdir -p "$HOME"

# start_server NAME: a fresh serve-api with the short budget, its log in $work/NAME.log.
start_server() {
    stop_server
    rm -f "$work/ready"
    "$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$work/$1.server.db" \
        --ready-file "$work/ready" --rate-limit 100 --rate-window 10 2>"$work/$1.log" &
    server_pid=$!
    while [ ! -s "$work/ready" ]; do sleep 0.02; done # poll for the ready file
    url="http://$(cat "$work/ready")"
    export RAMPART_API_URL="$url"
}

# rules FILE N FIRST: N rule creates (distinct /24s from number FIRST on), as an
# import file.
rules() {
    awk -v n="$2" -v f="$3" 'BEGIN {
        printf "[";
        for (i = f; i < f + n; i++)
            printf "%s{\"cidr\":\"10.%d.%d.0/24\",\"ip_policy_id\":\"ipp_pacing\",\"action\":\"deny\"}",
                (i > f ? ",\n" : ""), int(i / 256) % 256, i % 256;
        print "]" }' >"$1"
}

# count LOG REGEX: lines of the server's log matching REGEX (extended).
count() { grep -c -E "$2" "$1" || true; }
# The log's facts about rampart's requests (client=rampart/...).
tally() {
    log=$1
    sleep 0.2 # the server logs a request after replying: let the last line land
    grep ' client=rampart/' "$log" >"$log.rampart" || true
    r_all=$(wc -l <"$log.rampart")
    r_429=$(count "$log.rampart" ' 429 ')
    r_posts=$(count "$log.rampart" '^POST .* 201 ')
    r_pages=$(count "$log.rampart" '^GET /(credentials|ip_policy_rules)(\?[^ ]*)? 200 ')
    r_else=$((r_all - r_429 - r_posts - r_pages))
}
# on_server NAME: rules in serve-api's database (read once it stopped: asking it
# over HTTP would spend the budget the runs measure).
on_server() { "$RAMPART" --db "$work/$1.server.db" rules list | awk 'NR > 1' | wc -l; }
# queued DB: rows of the cache not yet synced.
queued() { "$RAMPART" --db "$1" rules list 2>/dev/null | awk 'NR > 1 && $2 != "synced"' | wc -l; }

# ---- a) 500 queued creates, one sync, share 100% ----
start_server a
rules "$work/a.json" "$n_a" 0
"$RAMPART" --db "$work/a.db" rules import "$work/a.json" >/dev/null
t0=$(now)
rc_a=0
RAMPART_SHARE=100 timeout "$cap" "$RAMPART" --db "$work/a.db" sync >"$work/a.out" 2>&1 || rc_a=$?
t1=$(now)
tally "$work/a.log"
a_s=$(secs "$t0" "$t1")
stop_server
a_server=$(on_server a)
a_note="exit $rc_a"
[ "$rc_a" != 124 ] || a_note="cut at $cap s"
bench_row "pacing: $n_a creates, sync s (share 100%)" "$a_s" "$base_s" "$(bench_ratio "$a_s" "$base_s")" \
    "ratio <= 1.15 (baseline: $n_a requests at 100 per 10 s; $a_note; $a_server on the server)"
bench_row "... 429s" "$r_429" "" "" "0 (serve-api: 100 per rolling 10 s; RAMPART_RATE=100 RAMPART_WINDOW=10)"
bench_row "... requests sent" "$r_all" "$((n_a + r_pages))" "" \
    "= changes + pages ($r_posts creates, $r_pages listing pages, $r_else else)"

# ---- b) two processes on one cache, 250 creates each, at once ----
start_server b
half=$((n_a / 2))
rules "$work/b1.json" "$half" 0
rules "$work/b2.json" "$half" "$half"
# The cache exists before the two start: two processes creating a new cache at
# once can collide ("database is locked" from the one that loses), which is not
# what this run measures.
echo '[]' >"$work/empty.json"
"$RAMPART" --db "$work/b.db" rules import "$work/empty.json" >/dev/null
# A cache allows one sync at a time: the second waits for the first. Were it
# refused (exit 4, "another sync of this database is running"), the process
# retries as a script would (every 0.5 s) until its own sync ran, so both push
# their changes either way.
t0=$(now)
for p in 1 2; do
    (
        rc=0
        busy=0
        "$RAMPART" --db "$work/b.db" rules import "$work/b$p.json" >"$work/b$p.out" 2>&1 || rc=$?
        while [ "$rc" = 0 ]; do
            rc=0
            RAMPART_SHARE=100 timeout "$cap" "$RAMPART" --db "$work/b.db" sync \
                >"$work/b$p.sync" 2>&1 || rc=$?
            cat "$work/b$p.sync" >>"$work/b$p.out"
            grep -q 'another sync of this database is running' "$work/b$p.sync" || break
            busy=$((busy + 1))
            rc=0
            sleep 0.5
        done
        echo "$rc $(now) $busy" >"$work/b$p.end"
    ) &
    eval "b_pid$p=$!"
done
wait "$b_pid1" "$b_pid2" || true
tally "$work/b.log"
b_left=$(queued "$work/b.db")
read -r rc1 end1 busy1 <"$work/b1.end"
read -r rc2 end2 busy2 <"$work/b2.end"
s1=$(secs "$t0" "$end1")
s2=$(secs "$t0" "$end2")
b_s=$(awk -v a="$s1" -v b="$s2" 'BEGIN { print (a > b ? a : b) }')
stop_server
b_server=$(on_server b)
bench_row "pacing: 2 processes x $half creates, s" "$b_s" "$base_s" "$(bench_ratio "$b_s" "$base_s")" \
    "ratio <= 1.25, both (baseline: $n_a requests at 100 per 10 s; the slower process)"
bench_row "... each process: s, exit status" "$s1 / $s2" "" "" \
    "exit $rc1 / $rc2 (0: converged; 4: not; 124: cut at $cap s)"
bench_row "... syncs refused: another one running" "$busy1 / $busy2" "" "" \
    "(the cache's sync lock; retried every 0.5 s)"
for p in 1 2; do # a process that failed otherwise: its first complaint
    eval "rc=\$rc$p"
    [ "$rc" = 0 ] && continue
    said=$(grep -m 1 -E '^(rampart|error|failure)' "$work/b$p.out" | cut -c 1-70 || true)
    bench_row "... process $p said" "" "" "" "$said"
done
bench_row "... 429s" "$r_429" "" "" \
    "<= 3 ($r_all requests: $r_posts creates, $r_pages pages, $r_else else)"
bench_row "... creates on the server" "$b_server" "$n_a" "" "= $n_a ($b_left rows left queued in the cache)"

# ---- c) the default share while another client spends 20% of the budget ----
start_server c
rules "$work/c.json" "$n_c" 0
"$RAMPART" --db "$work/c.db" rules import "$work/c.json" >/dev/null
# The other client: one curl process, 2 requests a second (--rate spreads them),
# kept alive; enough requests for the whole run, stopped when rampart is done.
i=0
: >"$work/other.cfg"
while [ $i -lt $((cap * 2 + 20)) ]; do
    printf 'url = "%s/ip_policy_rules?limit=1"\noutput = "/dev/null"\n' "$url" >>"$work/other.cfg"
    i=$((i + 1))
done
curl -s --rate 2/s -A "bench-other/1" -H "Authorization: Bearer $key" \
    -H "Service-Version: 2" -K "$work/other.cfg" >/dev/null 2>&1 &
other_pid=$!
sleep 3 # the other client is under way, at its steady pace
t0=$(now)
rc_c=0
timeout "$cap" "$RAMPART" --db "$work/c.db" sync >"$work/c.out" 2>&1 || rc_c=$?
t1=$(now)
sleep 2 # the other client goes on a little after rampart is done
kill "$other_pid" 2>/dev/null || true
wait "$other_pid" 2>/dev/null || true
other_pid=""
tally "$work/c.log"
c_s=$(secs "$t0" "$t1")
o_all=$(count "$work/c.log" ' client=bench-other/1$')
o_429=$(count "$work/c.log" ' 429 .*client=bench-other/1$')
stop_server
c_server=$(on_server c)
c_rate=$(awk -v n="$r_all" -v s="$c_s" 'BEGIN { if (s > 0) printf "%.2f", n / s }')
c_note="exit $rc_c"
[ "$rc_c" != 124 ] || c_note="cut at $cap s"
bench_row "pacing: share 80% + other client, 429s" "$r_429 / $o_429" "" "" \
    "<= 5 / 0 (rampart / the other client: $r_all / $o_all requests)"
bench_row "... rampart's pace, req/s" "$c_rate" "8" "$(bench_ratio "$c_rate" 8)" \
    "(baseline: 80% of 100 per 10 s; $n_c creates in $c_s s, $c_note; $c_server on the server)"
bench_done
