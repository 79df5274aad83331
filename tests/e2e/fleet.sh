#!/bin/sh
# A fleet on one account, with the real pieces: serve-api as the remote with the
# production rate limit (120 per rolling 60 s), one hub (`rampart sync` from it,
# paced by the default budget, then `rampart agent --mirror-only` on loopback),
# nginx with proxy_cache in front of the hub's mirror (assets/nginx-fleet.conf,
# checked with `nginx -t` as shipped but for its paths), and 5 followers, each
# with its own cache, read_only, pulling from nginx. Without nginx: skipped.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
export LC_ALL=C

FLEET_DIR=$tmp
. "$here/fleet_lib.sh"
if ! fleet_nginx; then
    skip_all "nginx is not installed (the fleet test needs the real tool: apt-get install nginx)"
fi

trap 'fleet_stop_nginx; fleet_stop_hub; stop_server; rm -rf "$tmp"' EXIT INT TERM

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
N=5          # followers
RULES=250    # 3 pages of 100
MAXAGE=2     # seconds: the hub's mirror_max_age here
HUB="$tmp/hub.db"

# ---- the remote: 250 rules and a credential; production rate limit ----
awk -v n="$RULES" -v p="$P" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.0/24\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"allow\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, int(i / 256), i % 256, p;
    print "]" }' >"$tmp/remote.json"
"$RAMPART" --db "$tmp/fleet.server.db" rules import "$tmp/remote.json" >/dev/null
start_server fleet --rate-limit 120 --rate-window 60 || exit 1
api POST /credentials '{"description":"web"}' >/dev/null
served() { grep -c ' client=' "$tmp/fleet.server.log"; } # requests serve-api answered

# ---- the hub: a paced pull (the default budget: 80% of 120 per 60 s) ----
hub_sync() {
    RAMPART_RATE=120 RAMPART_WINDOW=60 "$RAMPART" --db "$HUB" sync --pull-only \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
}
hub_sync
check "hub: pulled the remote's 250 rules under its rate limit" sh -c \
    '[ "$0" = 0 ] && grep -q "remote has 250 rules, 1 credentials" "$1"' "$status" "$tmp/out"
PAGES=$(($(served) - 1)) # one pull: 3 rule pages and 1 credential page (and the POST)

# ---- nginx in front of the hub's mirror: one key per follower ----
mkdir -p "$tmp/ngx/keys"
for i in $(seq 1 $N); do
    key=fleet_${i}_$(fleet_key)
    printf '%s\n' "$key" >"$tmp/f$i.key"
    printf '"Bearer %s" f%s;\n' "$key" "$i" >>"$tmp/ngx/keys/keys.map"
done
have_tls=""
fleet_tls && have_tls=1
if ! fleet_start "$HUB" $MAXAGE 1 "$have_tls"; then
    fail "nginx or the hub's agent did not start"
    sed 's/^/#   /' "$tmp/ngx/start.log" "$tmp/ngx/error.log" "$tmp/hub.log" 2>/dev/null | tail -n 20
    exit 0
fi
status=$fleet_conf_status
cp "$tmp/ngx/t.log" "$tmp/err"
: >"$tmp/out"
check "nginx -t accepts assets/nginx-fleet.conf${have_tls:+ (its TLS server block with a self-signed certificate)}" status_is 0
U="http://127.0.0.1:$NPORT"

# nget KEYFILE URL [curl args]: GET through nginx; body $tmp/out, headers $tmp/hdr.
nget() {
    k=$1
    u=$2
    shift 2
    printf 'header = "Authorization: Bearer %s"\n' "$(cat "$k")" >"$tmp/n.curl"
    status=$(curl -sS --max-time 10 -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' \
        -K "$tmp/n.curl" "$@" "$u" 2>"$tmp/err")
}

# ---- the bearer key, TLS, what is served ----
curl -s -o "$tmp/out" -w '%{http_code}' "$U/ip_policy_rules" >"$tmp/code"
check "nginx: no key, 401" grep -qx 401 "$tmp/code"
printf 'header = "Authorization: Bearer wrong"\n' >"$tmp/w.curl"
curl -s -o "$tmp/out" -w '%{http_code}' -K "$tmp/w.curl" "$U/ip_policy_rules" >"$tmp/code"
check "nginx: a key not in the map, 401" grep -qx 401 "$tmp/code"
if [ -n "$have_tls" ]; then
    nget "$tmp/f1.key" "https://127.0.0.1:$TPORT/ip_policy_rules?limit=1" --cacert "$tmp/ngx/tls.pem"
    check "nginx over TLS: a follower's key, 200" replied 200 '"ip_policy_rules":\['
else
    skip "nginx over TLS" "no openssl to make a certificate"
fi
nget "$tmp/f2.key" "$U/ip_policy_rules?limit=1"
check "a page through nginx: uris at the public URL" out_has "\"next_page_uri\":\"$U/ip_policy_rules?before_id="
check "  strong ETag, Cache-Control public max-age=$MAXAGE, stale-while-revalidate" sh -c \
    'tr -d "\r" <"$0" | grep -q "^ETag: \"[0-9a-f]*-r[0-9]*-[0-9a-f]*\"$" &&
     tr -d "\r" <"$0" | grep -q "^Cache-Control: public, max-age=$1, stale-while-revalidate=$1$"' \
    "$tmp/hdr" "$MAXAGE"
CRED=$(sqlite3 "$HUB" "SELECT id FROM credentials LIMIT 1")
nget "$tmp/f2.key" "$U/credentials"
check "credentials through nginx: token null" sh -c \
    '[ "$0" = 200 ] && grep -q "\"id\":\"$1\"" "$2" && grep -q "\"token\":null" "$2"' \
    "$status" "$CRED" "$tmp/out"
for path in "/v1/credentials/$CRED/token" /v1/tokens/web "/v1/tokens?name=web" \
    "/v1/ip_policies/$P/check?ip=10.0.0.1" /healthz; do
    nget "$tmp/f2.key" "$U$path"
    check "nginx does not serve $path (404)" replied 404 ERR_NOT_FOUND
done
key_config "$tmp/hub.key"
treq "$HUB_ADDR" "/v1/credentials/$CRED/token"
check "the hub's mirror-only listener has no token route: 404, no-store" sh -c \
    '[ "$0" = 404 ] && tr -d "\r" <"$1" | grep -q "^Cache-Control: no-store$"' "$status" "$tmp/hdr"

# ---- followers: each its own cache, read_only, remote = nginx ----
follower() { # I ARGS...: rampart on follower I's cache
    i=$1
    shift
    RAMPART_API_URL=$U RAMPART_API_KEY=$(cat "$tmp/f$i.key") RAMPART_READ_ONLY=true \
        RAMPART_RATE=0 "$RAMPART" --db "$tmp/f$i.db" "$@"
}
# Wait for the pids in $jobs (not `wait` alone: it would wait for the servers).
wait_jobs() {
    for j in $jobs; do wait "$j"; done
    jobs=""
}
round() { # every follower pulls at once; $tmp/round.fail lists those that failed
    : >"$tmp/round.fail"
    jobs=""
    for i in $(seq 1 $N); do
        { follower $i sync >"$tmp/f$i.out" 2>&1 || echo $i >>"$tmp/round.fail"; } &
        jobs="$jobs $!"
    done
    wait_jobs
}
lines() { wc -l <"$tmp/ngx/access.log" 2>/dev/null || echo 0; }
served_before=$(served)
round
check "$N followers pulled through nginx" sh -c '[ ! -s "$0" ] && grep -q "remote has 250 rules, 1 credentials" "$1"' \
    "$tmp/round.fail" "$tmp/f3.out"
before=$(lines)
round
round
check "followers send If-None-Match and get 304s for unchanged pages" sh -c \
    'n=$(tail -n +$(($0 + 1)) "$1" | grep -c " 304 [A-Z-]* inm=1 "); [ "$n" -ge $(($2 * 2 * 4)) ]' \
    "$before" "$tmp/ngx/access.log" "$N"
check "serve-api saw only the hub's requests (none during 3 rounds of $N followers)" \
    sh -c '[ "$(grep -c " client=" "$0")" = "$1" ]' "$tmp/fleet.server.log" "$served_before"

# ---- followers answer from their cache, and change nothing ----
follower 1 check $P 10.0.5.1 >"$tmp/out" 2>"$tmp/err"
status=$?
check "a follower's check answers from its cache" sh -c '[ "$0" = 0 ] && grep -q allowed "$1"' \
    "$status" "$tmp/out"
follower 2 rules create --cidr 192.0.2.0/24 --policy $P --action deny >"$tmp/out" 2>"$tmp/err"
status=$?
check "a follower refuses rules create (exit 2, naming read_only)" refused 2 \
    "refused: this cache follows a read-only remote (RAMPART_READ_ONLY=true"
for cmd in "rules delete ipr_000000000000000000000000001" "creds delete $CRED" \
    "rules update ipr_000000000000000000000000001 --description x" "sync --push-only"; do
    follower 2 $cmd >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "a follower refuses $(echo "$cmd" | cut -d' ' -f1-2)" refused 2 "read_only"
done
printf '198.51.100.0/24\n' >"$tmp/list.txt"
follower 2 apply --policy $P --action deny "$tmp/list.txt" >"$tmp/out" 2>"$tmp/err"
status=$?
check "a follower refuses apply" refused 2 "read_only"
check "  and queued nothing" sh -c '[ "$(sqlite3 "$0" "SELECT count(*) FROM rules WHERE state <> '"'synced'"'")" = 0 ]' \
    "$tmp/f2.db"
printf 'key c\ndump\n' >"$tmp/keys.txt"
follower 3 tui --headless "$tmp/keys.txt" --size 100x20 --no-agent >"$tmp/out" 2>"$tmp/err"
check "a follower's console is read-only and says why" \
    out_has "read-only console (a follower: RAMPART_READ_ONLY=true in the environment)"
follower 4 status >"$tmp/out" 2>"$tmp/err"
check "status on a follower: its upstream, read-only, the age of its data" sh -c \
    'grep -q "^upstream  *$0 (read-only" "$1" && grep -q "^data age  *[0-9]*s (last pull 20" "$1"' \
    "$U" "$tmp/out"
follower 4 status --json >"$tmp/out" 2>"$tmp/err"
check "  --json: read_only, last_pull, data_age_s" sh -c \
    'grep -q "\"read_only\": true, \"last_pull\": \"20[-0-9T:]*Z\", \"data_age_s\": [0-9]" "$0"' "$tmp/out"

# ---- a change at the remote reaches every follower: hub sync + max-age ----
api POST /ip_policy_rules "{\"cidr\":\"172.16.0.0/12\",\"ip_policy_id\":\"$P\",\"action\":\"deny\"}" \
    >"$tmp/new.json"
NEW=$(sed -n 's/^{"id":"\(ipr_[^"]*\)".*/\1/p' "$tmp/new.json")
# and one removed: a follower forgets it (nothing of its own to keep for review)
GONE=$(sqlite3 "$tmp/fleet.server.db" "SELECT id FROM rules ORDER BY id LIMIT 1")
api DELETE "/ip_policy_rules/$GONE" >/dev/null
hub_sync
check "hub: pulled the change" out_has "1 new there"
hub_requests=$(($(served) - served_before - 2)) # the POST and DELETE above were the test's own
# Poll: each follower pulls until it has the new rule (the cache's copy ages out
# after max-age); at most 30 s.
start=$(date +%s)
have() {
    [ "$(sqlite3 "$tmp/f$1.db" "SELECT state FROM rules WHERE id = '$NEW'")" = synced ] &&
        [ -z "$(sqlite3 "$tmp/f$1.db" "SELECT state FROM rules WHERE id = '$GONE'")" ]
}
while :; do
    missing=""
    for i in $(seq 1 $N); do have $i || missing="$missing $i"; done
    [ -z "$missing" ] && break
    [ $(($(date +%s) - start)) -gt 30 ] && break
    jobs=""
    for i in $missing; do
        follower $i sync >/dev/null 2>&1 &
        jobs="$jobs $!"
    done
    wait_jobs
    sleep 0.2 # polling: the next round, bounded by the 30 s above
done
took=$(($(date +%s) - start))
check "the changes reached all $N followers (${took}s after the hub's sync; max-age $MAXAGE s)" \
    [ -z "$missing" ]
sqlite3 "$tmp/fleet.server.db" "SELECT id, cidr, action FROM rules ORDER BY id" >"$tmp/truth"
wrong=0
for i in $(seq 1 $N); do
    sqlite3 "$tmp/f$i.db" "SELECT id, cidr, action FROM rules ORDER BY id" |
        cmp -s - "$tmp/truth" || wrong=$((wrong + 1))
done
check "0 followers with wrong data (each one's rules = serve-api's $RULES, one added, one gone)" \
    [ $wrong = 0 ]
follower 5 check $P 172.16.1.1 >"$tmp/out" 2>"$tmp/err"
status=$?
check "  a follower's check denies by the new rule" sh -c '[ "$0" = 1 ] && grep -q "$1" "$2"' \
    "$status" "$NEW" "$tmp/out"

# ---- what reached whom ----
follower_requests=$(lines)
fleet_stop_hub
hub_seen=$(fleet_hub_requests)
check "serve-api: only the hub's pulls ($PAGES + $hub_requests requests; followers: 0)" \
    [ "$hub_requests" = "$PAGES" ]
check "the hub saw $hub_seen requests for $follower_requests from followers (bounded by the cache)" \
    sh -c '[ -n "$0" ] && [ "$0" -lt $(($1 / 3)) ]' "$hub_seen" "$follower_requests"
fleet_stop_nginx
checks_done
exit 0
