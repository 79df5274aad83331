#!/bin/sh
# make bench: a fleet on one account (figures, not pass/fail). serve-api is the
# remote with the production rate limit (120 requests per rolling 60 s); one hub
# pulls from it every BENCH_FLEET_HUB_EVERY seconds (`rampart sync --pull-only`,
# the default budget: 80% of it, paced), and serves its cache through `rampart
# agent --mirror-only` (max-age BENCH_FLEET_MAX_AGE) on loopback; nginx with
# proxy_cache in front (assets/nginx-fleet.conf); BENCH_FLEET_N followers (default
# 200), each its own cache, read_only, pulling from nginx every
# BENCH_FLEET_EVERY seconds (a shell loop of `rampart sync` each, started spread
# over that interval). After every follower has pulled once and
# BENCH_FLEET_STEADY seconds of steady state, one rule is created at serve-api;
# the bench waits (polling the followers' caches) until every follower holds it.
# Printed: requests that reached serve-api (all from the hub), requests that
# reached the hub against those that reached nginx, the time the change took to
# reach every follower against max-age + one hub sync interval, and the followers
# whose rules differ from serve-api's at the end (goal 0).
# usage: tests/bench/fleet.sh BUILD_DIR   (rampart inside; or RAMPART=path)
set -u
. "$(dirname "$0")/table.sh"
if [ -n "${RAMPART:-}" ]; then
    RAMPART=$(cd "$(dirname "$RAMPART")" && pwd)/$(basename "$RAMPART")
else
    RAMPART="$(cd "${1:?usage: fleet.sh BUILD_DIR}" && pwd)/rampart"
fi
N=${BENCH_FLEET_N:-200}
RULES=${BENCH_FLEET_RULES:-500}
EVERY=${BENCH_FLEET_EVERY:-5}
# The hub pulls less often than a follower does, as in a real fleet (a hub's pulls
# spend the account's budget; a follower's spend nothing): the goal, max-age + one
# hub interval, leaves room for a follower's own interval only then.
HUB_EVERY=${BENCH_FLEET_HUB_EVERY:-30}
MAXAGE=${BENCH_FLEET_MAX_AGE:-5}
STEADY=${BENCH_FLEET_STEADY:-30}
CAP=${BENCH_FLEET_CAP:-120} # seconds to wait for the change at most
P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a

work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-fleet.XXXXXX")
FLEET_DIR=$work
. "$(dirname "$0")/../e2e/fleet_lib.sh"
server_pid=""
hub_loop=""
cleanup() {
    touch "$work/stop"
    [ -z "$hub_loop" ] || kill "$hub_loop" 2>/dev/null
    for j in $(cat "$work/loops" 2>/dev/null); do kill "$j" 2>/dev/null; done
    fleet_stop_nginx
    fleet_stop_hub
    [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
now() { date +%s.%N; }
unset RAMPART_DB RAMPART_CONFIG RAMPART_SHARE RAMPART_TIMEOUT RAMPART_RATE RAMPART_WINDOW \
    RAMPART_READ_ONLY
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" XDG_DATA_HOME="$work/home/data"
mkdir -p "$HOME" "$work/ngx/keys" "$work/f"

if ! fleet_nginx; then
    echo "fleet bench: skipped (nginx not installed: apt-get install nginx)"
    bench_row "fleet: $N followers" "skipped" "" "" "(nginx not installed)"
    bench_done
    exit 0
fi

# ---- the remote and the hub ----
awk -v n="$RULES" -v p="$P" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.0/24\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"allow\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, int(i / 256) % 256, i % 256, p;
    print "]" }' >"$work/remote.json"
"$RAMPART" --db "$work/server.db" rules import "$work/remote.json" >/dev/null
skey=bench_fleet_$$_$(fleet_key)
RAMPART_SERVE_API_KEY=$skey "$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$work/server.db" \
    --ready-file "$work/server.ready" --rate-limit 120 --rate-window 60 2>"$work/server.log" &
server_pid=$!
while [ ! -s "$work/server.ready" ]; do sleep 0.02; done # poll for the ready file
surl="http://$(cat "$work/server.ready")"
hub_env() { RAMPART_API_URL=$surl RAMPART_API_KEY=$skey "$@"; }
hub_env "$RAMPART" --db "$work/hub.db" sync --pull-only >/dev/null 2>"$work/hub-sync.err" || {
    echo "fleet bench: the hub's first pull failed"
    cat "$work/hub-sync.err"
    exit 0
}
fkey=fleet_$(fleet_key)
printf '"Bearer %s" fleet;\n' "$fkey" >"$work/ngx/keys/keys.map"
workers=$(nproc 2>/dev/null || echo 2)
if ! fleet_start "$work/hub.db" "$MAXAGE" "$workers" ""; then
    echo "fleet bench: nginx or the hub's agent did not start"
    tail -n 5 "$work/ngx/error.log" "$work/hub.log" 2>/dev/null
    exit 0
fi
U="http://127.0.0.1:$NPORT"

# The hub pulls every HUB_EVERY seconds, start to start (each pull paced by the
# default budget).
(
    next=$(awk -v t="$(now)" -v e="$HUB_EVERY" 'BEGIN { printf "%.3f", t + e }')
    while [ ! -e "$work/stop" ]; do
        wait_s=$(awk -v n="$next" -v t="$(now)" 'BEGIN { w = n - t; printf "%.3f", (w > 0 ? w : 0) }')
        sleep "$wait_s"
        [ -e "$work/stop" ] && break
        next=$(awk -v t="$next" -v e="$HUB_EVERY" 'BEGIN { printf "%.3f", t + e }')
        now >>"$work/hub-syncs"
        hub_env "$RAMPART" --db "$work/hub.db" sync --pull-only >>"$work/hub-sync.log" 2>&1
    done
) &
hub_loop=$!

# ---- the followers: a loop each, started spread over one interval ----
follower_loop() { # I DELAY
    db="$work/f/$1.db"
    sleep "$2"
    while [ ! -e "$work/stop" ]; do
        RAMPART_API_URL=$U RAMPART_API_KEY=$fkey RAMPART_READ_ONLY=true RAMPART_RATE=0 \
            "$RAMPART" --db "$db" sync >/dev/null 2>&1 || echo x >>"$work/f/$1.fail"
        [ -e "$work/f/$1.first" ] || date +%s.%N >"$work/f/$1.first"
        if [ -e "$work/change" ] && [ ! -e "$work/f/$1.seen" ] &&
            [ "$(sqlite3 "$db" "SELECT state FROM rules WHERE id = '$(cat "$work/change")'")" = synced ]; then
            date +%s.%N >"$work/f/$1.seen"
        fi
        sleep "$EVERY"
    done
}
: >"$work/loops"
i=1
while [ $i -le "$N" ]; do
    delay=$(awk -v i="$i" -v n="$N" -v e="$EVERY" 'BEGIN { printf "%.3f", e * (i - 1) / n }')
    follower_loop "$i" "$delay" &
    echo $! >>"$work/loops"
    i=$((i + 1))
done
count() { ls "$work/f" | grep -c "\.$1$"; }
t0=$(date +%s)
while [ "$(count first)" -lt "$N" ] && [ $(($(date +%s) - t0)) -lt "$CAP" ]; do
    sleep 0.5 # polling: every follower's first pull
done
first_all=$(($(date +%s) - t0))

# ---- steady state, then the change ----
served() { grep -c ' client=' "$work/server.log"; }
sleep "$STEADY"
api_resp=$(curl -sS -X POST -H "Authorization: Bearer $skey" -H "Service-Version: 2" \
    -H "Content-Type: application/json" \
    --data "{\"cidr\":\"172.16.0.0/12\",\"ip_policy_id\":\"$P\",\"action\":\"deny\"}" \
    "$surl/ip_policy_rules")
changed_at=$(now)
printf '%s' "$api_resp" | sed -n 's/^{"id":"\(ipr_[^"]*\)".*/\1/p' >"$work/change"
t1=$(date +%s)
hub_at=""
while [ "$(count seen)" -lt "$N" ] && [ $(($(date +%s) - t1)) -lt "$CAP" ]; do
    if [ -z "$hub_at" ] && [ "$(sqlite3 "$work/hub.db" \
        "SELECT state FROM rules WHERE id = '$(cat "$work/change")'")" = synced ]; then
        hub_at=$(now)
    fi
    sleep 0.2 # polling: the hub, then every follower, holding the new rule
done
seen=$(count seen)
last_seen=$(cat "$work"/f/*.seen 2>/dev/null | sort -n | tail -n 1)
reach_s=$(awk -v a="$changed_at" -v b="${last_seen:-0}" 'BEGIN { printf "%.1f", b - a }')
hub_s=$(awk -v a="$changed_at" -v b="${hub_at:-0}" 'BEGIN { printf "%.1f", b - a }')
fanout_s=$(awk -v a="${hub_at:-0}" -v b="${last_seen:-0}" 'BEGIN { printf "%.1f", b - a }')
median_s=$(cat "$work"/f/*.seen 2>/dev/null | sort -n |
    awk -v a="$changed_at" '{ v[NR] = $1 - a } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)] }')
run_s=$(($(date +%s) - t0))

# ---- stop, then count ----
touch "$work/stop"
kill "$hub_loop" 2>/dev/null
wait "$hub_loop" 2>/dev/null
hub_loop=""
for j in $(cat "$work/loops"); do wait "$j" 2>/dev/null; done
: >"$work/loops"
fleet_stop_hub
hub_requests=$(fleet_hub_requests)
fleet_stop_nginx
sqlite3 "$work/server.db" "SELECT id, cidr, action FROM rules ORDER BY id" >"$work/truth"
wrong=0
i=1
while [ $i -le "$N" ]; do
    sqlite3 "$work/f/$i.db" "SELECT id, cidr, action FROM rules WHERE state = 'synced' ORDER BY id" 2>/dev/null |
        cmp -s - "$work/truth" || wrong=$((wrong + 1))
    i=$((i + 1))
done
remote_requests=$(($(served) - 1)) # less the bench's own POST
remote_429=$(grep -c ' 429 ' "$work/server.log")
ngx_requests=$(wc -l <"$work/ngx/access.log")
ngx_304=$(grep -c ' 304 [A-Z-]* inm=1 ' "$work/ngx/access.log")
ngx_hits=$(awk '$4 == "HIT" || $4 == "STALE" || $4 == "UPDATING" || $4 == "REVALIDATED"' "$work/ngx/access.log" | wc -l)
hub_syncs=$(($(wc -l <"$work/hub-syncs" 2>/dev/null || echo 0) + 1))
failed=$(cat "$work"/f/*.fail 2>/dev/null | wc -l)
# A follower's interval as it was: its pulls (first rule pages asked) over the
# run, per follower (a loaded machine stretches the loops past EVERY).
pulls=$(awk '$NF == "/ip_policy_rules"' "$work/ngx/access.log" | wc -l)
interval_s=$(awk -v n="$N" -v p="$pulls" -v t="$run_s" 'BEGIN { if (p) printf "%.1f", n * t / p }')
pages=$(( (RULES + 99) / 100 + 1 ))

echo "fleet bench: $N followers every ${EVERY}s, $RULES rules ($pages pages a pull), hub every" \
    "${HUB_EVERY}s, max-age ${MAXAGE}s; ${run_s}s in all (first pull of every follower:" \
    "${first_all}s)"
bench_row "fleet: requests that reached serve-api" "$remote_requests" "$ngx_requests" \
    "$(bench_ratio "$remote_requests" "$ngx_requests")" \
    "only the hub's ($hub_syncs pulls of $pages pages, $remote_429 429s) (baseline: the followers' requests)"
bench_row "fleet: requests that reached the hub" "${hub_requests:-?}" "$ngx_requests" \
    "$(bench_ratio "${hub_requests:-0}" "$ngx_requests")" \
    "bounded by the cache, not by N (baseline: requests at nginx from $N followers)"
bench_row "... nginx answers from its cache, 304s" "$ngx_hits / $ngx_304" "" "" \
    "(HIT, REVALIDATED, STALE, UPDATING / 304 to a follower's If-None-Match)"
bench_row "fleet: a change reaches every follower, s" "$reach_s" "$((MAXAGE + HUB_EVERY))" \
    "$(bench_ratio "$reach_s" "$((MAXAGE + HUB_EVERY))")" \
    "< max-age + hub interval ($MAXAGE + $HUB_EVERY s); $seen of $N, median ${median_s:-?}s"
bench_row "... the hub has it, s" "$hub_s" "$HUB_EVERY" "$(bench_ratio "$hub_s" "$HUB_EVERY")" \
    "< hub interval + its paced pull ($pages requests at 80% of 120/min)"
fan_goal=$(awk -v m="$MAXAGE" -v i="${interval_s:-$EVERY}" 'BEGIN { printf "%.1f", m + i }')
bench_row "... then every follower, s" "$fanout_s" "$fan_goal" \
    "$(bench_ratio "$fanout_s" "$fan_goal")" \
    "< max-age + a follower's interval ($MAXAGE + ${interval_s:-?} s measured; ${EVERY}s asked)"
bench_row "fleet: followers with wrong data" "$wrong" "" "" \
    "0 (every follower's rules = serve-api's; $failed follower syncs failed)"
bench_done
