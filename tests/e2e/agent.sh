#!/bin/sh
# `rampart agent`: real processes. Tokens created by a sync against serve-api are
# fetched over a unix socket and loopback TCP; every refusal (wrong uid, missing or
# wrong key, relayed or browser requests, foreign Host, bad paths, huge headers,
# slow clients, rate) gets its status and leaks nothing. (Mirror and policy checks:
# agent_mirror.sh.)
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
trap 'stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM

DB="$tmp/cache.db"
export RAMPART_DB="$DB"

# ---- credentials: created by syncs against a real serve-api ----
start_server agent || exit 1
token_of() { sed -n 's/^token: //p' "$tmp/out"; }
id_of() { sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out"; }

run creds create --description web --acl 'bind:*.example.com' --sync
WEB=$(id_of) T_WEB=$(token_of)
check "setup: a credential synced with its token" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$WEB" "$T_WEB"
run creds create --description dup --sync
DUP1=$(id_of) T_DUP1=$(token_of)
run creds create --description dup --sync
DUP2=$(id_of) T_DUP2=$(token_of)
run creds create --description old --sync
OLD=$(id_of) T_OLD=$(token_of)
run creds delete "$OLD" # deleting: its remote delete is not sent yet
run creds create --description later # queued, never sent: no token yet
LATER=$(sed -n 's/^created credential \(local_[^ ,]*\).*/\1/p' "$tmp/out")
# Created by another client: listed remotely, its token never seen here.
api POST /credentials '{"description":"elsewhere"}' >/dev/null
run sync --pull-only
ELSE=$(server_list credentials id | while read -r i; do
    api GET "/credentials/$i" | grep -q '"description":"elsewhere"' && echo "$i"; done)
check "setup: a credential created elsewhere was pulled" sh -c '[ -n "$0" ] && [ -n "$1" ]' \
    "$ELSE" "$LATER"
stop_server
TOKENS="$T_WEB $T_DUP1 $T_DUP2 $T_OLD"

# ---- start ----
mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
KEY="$tmp/keys/agent.key"
start_listening_agent a --listen "unix:$tmp/run/a.sock" --listen tcp:127.0.0.1:0 \
    --key-file "$KEY" --idle-timeout 2 --rate 0
check "ready file: the unix socket and tcp:127.0.0.1:PORT" \
    sh -c "grep -qx 'tcp:127\\.0\\.0\\.1:[1-9][0-9]*' '$tmp/a.ready'"
check "socket is 0600" [ "$(stat -c %a "$S")" = 600 ]
check "key file created 0600 in a 0700 directory" \
    sh -c '[ "$(stat -c %a "$0")" = 600 ] && [ "$(stat -c %a "$(dirname "$0")")" = 700 ]' "$KEY"
check "key: 64 hex digits" grep -qx '[0-9a-f]\{64\}' "$KEY"
check "stderr says where it listens" grep -q "listening on tcp:$T" "$tmp/a.log"
key_config "$KEY"

# ---- tokens over the unix socket ----
ureq "$S" /healthz
check "healthz: 200 JSON" replied 200 '"status":"ok"'
ureq "$S" "/v1/credentials/$WEB/token"
check "token by id: 200 {id, token, acl}" sh -c '[ "$0" = 200 ] && [ "$(cat "$1")" = "{\"id\":\"$2\",\"token\":\"$3\",\"acl\":[\"bind:*.example.com\"]}" ]' \
    "$status" "$tmp/out" "$WEB" "$T_WEB"
check "token reply: Cache-Control: no-store" hdr_has '^Cache-Control: no-store$'
check "token reply: JSON content type" hdr_has '^Content-Type: application/json'
ureq "$S" /v1/tokens/web
check "token by name: the same" sh -c '[ "$0" = 200 ] && grep -qF "\"token\":\"$1\"" "$2"' "$status" "$T_WEB" "$tmp/out"
ureq "$S" "/v1/tokens/dup"
check "two credentials named dup: 409 ERR_AMBIGUOUS" error_is ERR_AMBIGUOUS 409
check "409 lists both ids, in msg and in ids" sh -c 'grep -q "\"ids\":\[\"$0\",\"$1\"\]" "$2" && grep -qF ": $0, $1; ask by id" "$2"' \
    "$DUP1" "$DUP2" "$tmp/out"
ureq "$S" "/v1/credentials/$DUP2/token"
check "each still by id" sh -c '[ "$0" = 200 ] && grep -qF "$1" "$2"' "$status" "$T_DUP2" "$tmp/out"
ureq "$S" /v1/tokens/nobody
check "unknown name: 404" error_is ERR_NOT_FOUND 404
ureq "$S" /v1/credentials/cr_0000000000000000000000000zz/token
check "unknown id: 404" error_is ERR_NOT_FOUND 404
ureq "$S" /v1/credentials/ipr_0000000000000000000000000zz/token
check "an id of another kind: 404" error_is ERR_NOT_FOUND 404
ureq "$S" "/v1/credentials/$LATER/token"
check "queued, not yet created: 409 ERR_TOKEN_NOT_HELD" error_is ERR_TOKEN_NOT_HELD 409
check "  saying it arrives with the sync" out_has 'not created remotely yet'
ureq "$S" "/v1/credentials/$ELSE/token"
check "created elsewhere: 409 ERR_TOKEN_NOT_HELD" error_is ERR_TOKEN_NOT_HELD 409
check "  saying this machine does not hold it" out_has 'does not hold its token'
ureq "$S" "/v1/credentials/$OLD/token"
check "being deleted: 410 ERR_GONE" error_is ERR_GONE 410
ureq "$S" /v1/tokens/old
check "a deleted name: 404" is 404
ureq "$S" "/v1/tokens/web%20agent"
check "a percent-encoded name is decoded (no such one: 404)" replied 404 'named \\"web agent\\"'
ureq "$S" "/v1/tokens?name=web"
check "token by ?name=: the same" sh -c '[ "$0" = 200 ] && grep -qF "\"token\":\"$1\"" "$2"' "$status" "$T_WEB" "$tmp/out"
ureq "$S" "/v1/tokens?name=a%2Fb"
check "?name= carries a '/' (no such one: 404)" replied 404 'named \\"a/b\\"'
ureq "$S" "/v1/tokens?name=web&x=1"
check "?name= with another parameter: 400" error_is ERR_INVALID_QUERY 400
ureq "$S" "/v1/tokens"
check "no name at all: 400" error_is ERR_INVALID_QUERY 400

# Every reply says no-store, not only those holding a token.
ureq "$S" /v1/tokens/nobody
check "a 404 of a token route: no-store too" hdr_has '^Cache-Control: no-store$'
ureq "$S" /credentials
check "a mirror page: a cache may keep it (ETag, public, max-age 30 by default)" sh -c \
    'tr -d "\r" <"$0" | grep -q "^Cache-Control: public, max-age=30, stale-while-revalidate=30$" &&
     tr -d "\r" <"$0" | grep -q "^ETag: \""' "$tmp/hdr"
ureq "$S" /credentials/cr_0000000000000000000000zzzzz
check "a mirror 404: no-store" hdr_has '^Cache-Control: no-store$'
# A credential the remote refused to create: said so, no token.
sqlite3 "$DB" "UPDATE credentials SET state = 'failed' WHERE id = '$LATER'"
ureq "$S" "/v1/credentials/$LATER/token"
check "refused by the remote: 409 saying so" replied 409 'refused by the remote'
sqlite3 "$DB" "UPDATE credentials SET state = 'new' WHERE id = '$LATER'"

# ---- bad paths and methods ----
for p in / /v1 /v1/credentials//token /v1/tokens/ /v1/credentials/x/token/more /healthz/ \
    /v1/../etc/passwd /nope; do
    ureq "$S" "$p"
    check "GET $p: 404 in the API's shape" error_is ERR_NOT_FOUND 404
done
ureq "$S" /v1/tokens/web -X POST -d x
check "POST: 405 with Allow: GET" sh -c '[ "$0" = 405 ] && tr -d "\r" <"$1" | grep -q "^Allow: GET$"' "$status" "$tmp/hdr"
check "405 body: read-only" out_has 'read-only'
ureq "$S" "/v1/credentials/$WEB/token" -X DELETE
check "DELETE: 405" error_is ERR_METHOD_NOT_ALLOWED 405
# (Expect: the 413 comes before the body is sent, so curl reads it for sure.)
head -c 20000 /dev/zero | tr '\0' x >"$tmp/big"
ureq "$S" /v1/tokens/web -X POST -H 'Expect: 100-continue' --data-binary "@$tmp/big"
check "20 kB body: 413" error_is ERR_TOO_LARGE 413

# ---- TCP: the key, Host, relayed and browser requests ----
treq "$T" /v1/tokens/web
check "TCP with the key: 200 and the token" sh -c '[ "$0" = 200 ] && grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
check "TCP token reply: no-store" hdr_has '^Cache-Control: no-store$'
status=$(curl -sS -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' "http://$T/v1/tokens/web" 2>"$tmp/err")
check "TCP without a key: 401 + WWW-Authenticate" sh -c '[ "$0" = 401 ] && tr -d "\r" <"$1" | grep -q "^WWW-Authenticate: Bearer"' "$status" "$tmp/hdr"
check "  no token in the body" sh -c '! grep -qF "$0" "$1"' "$T_WEB" "$tmp/out"
status=$(curl -sS -o "$tmp/out" -w '%{http_code}' "http://$T/healthz" 2>"$tmp/err")
check "TCP healthz needs the key too: 401" is 401
# The last digit changed: the whole key must match.
last=$(head -c 64 "$KEY" | tail -c 1)
[ "$last" = 0 ] && other=1 || other=0
printf 'header = "Authorization: Bearer %s%s"\n' "$(head -c 63 "$KEY")" "$other" >"$tmp/wrong.curl"
KEYCONF="$tmp/wrong.curl" treq "$T" /v1/tokens/web
check "TCP with a wrong key: 401" error_is ERR_UNAUTHORIZED 401
check "  no token in the body" sh -c '! grep -qF "$0" "$1"' "$T_WEB" "$tmp/out"
printf 'header = "Authorization: Bearer %s"\n' "$(head -c 32 "$KEY")" >"$tmp/short.curl"
KEYCONF="$tmp/short.curl" treq "$T" /v1/tokens/web
check "TCP with half the key: 401" is 401
printf 'header = "Authorization: Basic %s"\n' "$(head -n 1 "$KEY")" >"$tmp/basic.curl"
KEYCONF="$tmp/basic.curl" treq "$T" /v1/tokens/web
check "TCP with the key as Basic: 401" is 401
treq "$T" /v1/tokens/web -H 'X-Forwarded-For: 203.0.113.9'
check "X-Forwarded-For: 403" sh -c '[ "$0" = 403 ] && grep -q "X-Forwarded-For" "$1" && ! grep -qF "$2" "$1"' "$status" "$tmp/out" "$T_WEB"
# A space before the colon: still the header a relay added (curl sends it as it is).
treq "$T" /v1/tokens/web -H 'X-Forwarded-For : 203.0.113.9'
check "X-Forwarded-For with a space before its colon: 400 or 403, never the token" \
    sh -c '{ [ "$0" = 403 ] || [ "$0" = 400 ]; } && ! grep -qF "$2" "$1"' "$status" "$tmp/out" "$T_WEB"
treq "$T" /v1/tokens/web -H 'Forwarded: for=203.0.113.9'
check "Forwarded: 403" is 403
treq "$T" /v1/tokens/web -H 'X-Forwarded-Host: localhost'
check "X-Forwarded-Host: 403" sh -c '[ "$0" = 403 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
check "  a refusal says no-store too" hdr_has '^Cache-Control: no-store$'
treq "$T" /v1/tokens/web -H 'Host:'
check "no Host header at all: refused, no token" sh -c '{ [ "$0" = 403 ] || [ "$0" = 400 ]; } && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
treq "$T" /v1/tokens/web -H 'Host: 127.0.0.1:99999999'
check "Host with a port that is no port: 403" is 403
treq "$T" /v1/tokens/web -H 'Origin: http://evil.example'
check "Origin: 403" error_is ERR_FORBIDDEN 403
treq "$T" /v1/tokens/web -H 'Sec-Fetch-Site: cross-site'
check "Sec-Fetch-Site (a browser): 403" is 403
treq "$T" /v1/tokens/web -H 'Host: evil.example'
check "Host evil.example (DNS rebinding): 403" sh -c '[ "$0" = 403 ] && grep -q "Host" "$1" && ! grep -qF "$2" "$1"' "$status" "$tmp/out" "$T_WEB"
# hosts_get STATUS HOST...: web's token over TCP with each Host header (PORT stands
# for the listener's port); each must get STATUS.
hosts_get() {
    want=$1
    shift
    for h in "$@"; do
        treq "$T" /v1/tokens/web -H "Host: $(printf '%s' "$h" | sed "s/PORT\$/${T#*:}/")"
        check "Host $h: $want" is "$want"
    done
}
hosts_get 403 evil.example:PORT 127.0.0.1.evil.example localhost.
hosts_get 200 localhost:PORT '[::1]' 127.0.0.2:80
ureq "$S" /v1/tokens/web -H 'X-Forwarded-For: 203.0.113.9'
check "X-Forwarded-For on the unix socket: 403 too" is 403
ureq "$S" /v1/tokens/web -H 'Origin: null'
check "Origin on the unix socket: 403 too" is 403
# Every header a relay adds, one table: refused like X-Forwarded-For.
for h in 'X-Real-IP: 203.0.113.9' 'X-Client-IP: 203.0.113.9' 'True-Client-IP: 203.0.113.9' \
    'X-Forwarded-Proto: http' 'Via: 1.1 proxy' 'Sec-Fetch-Mode: cors'; do
    treq "$T" /v1/tokens/web -H "$h"
    check "${h%%:*}: 403, no token" sh -c '[ "$0" = 403 ] && grep -qF "${2%%:*}" "$1" && ! grep -qF "$3" "$1"' \
        "$status" "$tmp/out" "$h" "$T_WEB"
done
ureq "$S" /v1/tokens/web -H 'X-Real-IP: 203.0.113.9'
check "X-Real-IP on the unix socket: 403 too" is 403

# ---- ambiguous requests: a header twice, control characters in a path ----
# (raw: curl sends one Host whatever it is given)
raw_req "tcp:$T" "$KEY" <<EOF2
GET /v1/tokens/web HTTP/1.1
Host: localhost
Host: evil.example
Authorization: Bearer KEY
EOF2
check "Host twice, the first loopback: 400, no token" sh -c '[ "$0" = 400 ] && grep -q "Host was sent more than once" "$1" && ! grep -qF "$2" "$1"' \
    "$status" "$tmp/out" "$T_WEB"
raw_req "tcp:$T" "$KEY" <<EOF2
GET /v1/tokens/web HTTP/1.1
host: evil.example
HOST: localhost
Authorization: Bearer KEY
EOF2
check "Host twice in any case, either order: 400" sh -c '[ "$0" = 400 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
raw_req "tcp:$T" "$KEY" <<EOF2
GET /v1/tokens/web HTTP/1.1
Host: localhost
Authorization: Bearer KEY
Authorization: Bearer KEY
EOF2
check "Authorization twice: 400" sh -c '[ "$0" = 400 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
raw_req "unix:$S" <<EOF2
GET /v1/tokens/web HTTP/1.1
Host: localhost
Host: localhost
EOF2
check "Host twice on the unix socket: 400 too" sh -c '[ "$0" = 400 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
raw_req "tcp:$T" "$KEY" <<EOF2
GET /v1/tokens/web HTTP/1.1
Host: localhost
Authorization: Bearer KEY
EOF2
check "  (the same request, once each: 200)" is 200
for p in /v1/tokens/web%00x /v1/tokens/web%00 /v1/tokens/we%0Ab /v1/tokens/web%1f /v1/tokens/web%7F \
    "/v1/credentials/$WEB%00/token" "/v1/tokens?name=web"; do
    treq "$T" "$p"
    case $p in
    *\?*) check "GET $p over TCP: 200 (a query is not the path)" is 200 ;;
    *) check "GET $p over TCP: 400, no token" sh -c '[ "$0" = 400 ] && grep -q "control character" "$1" && ! grep -qF "$2" "$1"' \
        "$status" "$tmp/out" "$T_WEB" ;;
    esac
done
ureq "$S" /v1/tokens/web%00x
check "GET /v1/tokens/web%00x on the unix socket: 400" sh -c '[ "$0" = 400 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
check "  in the API's shape" error_is ERR_BAD_REQUEST 400
status=$(curl -sS -o "$tmp/out" -w '%{http_code}' "http://$T/v1/tokens/web%00x" 2>"$tmp/err")
check "  without the key: 401 first (a stranger learns nothing)" is 401

# ---- huge headers, slow clients ----
big=$(head -c 20000 /dev/zero | tr '\0' a)
treq "$T" /v1/tokens/web -H "X-Big: $big"
check "20 kB header over TCP: refused (431)" sh -c '[ "$0" = 431 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
ureq "$S" /v1/tokens/web -H "X-Big: $big"
check "20 kB header over the socket: refused (431)" sh -c '[ "$0" = 431 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
ureq "$S" "/v1/tokens/$(head -c 9000 /dev/zero | tr '\0' a)"
check "9 kB path: refused (414 or 431)" sh -c '[ "$0" = 414 ] || [ "$0" = 431 ]' "$status"
# A client that sends half a request and stalls: closed after the idle timeout
# (2 s here) without a byte of reply, while others are served meanwhile.
perl -MIO::Socket::INET -e '
    $SIG{ALRM} = sub { print "hung\n"; exit 1 }; alarm 20;
    my $s = IO::Socket::INET->new(PeerAddr => $ARGV[0]) or die "connect: $!";
    print $s "GET /v1/tokens/web HTTP/1.1\r\nHost: localhost\r\n"; # never ends
    my $n = sysread($s, my $buf, 4096);
    print defined $n ? "closed after $n bytes\n" : "error\n";' "$T" >"$tmp/slow.out" 2>&1 &
slow=$!
treq "$T" /v1/tokens/web
check "served while a slow client stalls" is 200
wait $slow
check "stalled client: closed at the idle timeout, no reply" grep -qx 'closed after 0 bytes' "$tmp/slow.out"
perl -MIO::Socket::UNIX -e '
    $SIG{ALRM} = sub { print "hung\n"; exit 1 }; alarm 20;
    my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!";
    my $n = sysread($s, my $buf, 4096);
    print defined $n ? "closed after $n bytes\n" : "error\n";' "$S" >"$tmp/slow.out" 2>&1
check "silent client on the socket: closed, no reply" grep -qx 'closed after 0 bytes' "$tmp/slow.out"

# ---- audit ----
check "audit line per lookup: peer uid, credential, result" \
    grep -q "token peer=uid:$(id -u) by=id id=\"$WEB\" cred=$WEB result=ok" "$tmp/a.log"
check "audit: key peers over TCP" grep -q "token peer=key@127.0.0.1 by=name name=\"web\" cred=$WEB result=ok" "$tmp/a.log"
check "audit: not held, deleted, ambiguous, not found" sh -c '
    grep -q "cred=$1 result=not_held" "$0" && grep -q "cred=$2 result=deleted" "$0" &&
    grep -q "name=\"dup\" cred=- result=ambiguous" "$0" && grep -q "name=\"nobody\" cred=- result=not_found" "$0"' \
    "$tmp/a.log" "$LATER" "$OLD"
check "refusals are logged" grep -q 'refused peer=tcp:127.0.0.1 path="/v1/tokens/web" status=401' "$tmp/a.log"
leaks=0
for t in $TOKENS $(head -n 1 "$KEY"); do
    grep -qF "$t" "$tmp/a.log" && leaks=$((leaks + 1))
done
check "the log holds no token and no key" [ "$leaks" -eq 0 ]

# ---- a writer holding the cache's write lock does not block lookups (WAL) ----
# The writer waits inside its transaction until told to commit: no timing.
cat >"$tmp/hold.sh" <<EOF
touch "$tmp/locked"
i=0
while [ ! -e "$tmp/go" ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done
EOF
printf 'BEGIN IMMEDIATE;\nUPDATE credentials SET description = description;\n.shell sh %s\nCOMMIT;\n' \
    "$tmp/hold.sh" | sqlite3 "$DB" >"$tmp/writer.out" 2>&1 &
writer=$!
i=0
while [ ! -e "$tmp/locked" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
ureq "$S" "/v1/credentials/$WEB/token"
during=$status
treq "$T" /v1/tokens/web
check "lookups answer while a writer holds the write lock" \
    sh -c '[ -e "$0" ] && [ ! -e "$1" ] && [ "$2" = 200 ] && [ "$3" = 200 ]' \
    "$tmp/locked" "$tmp/go" "$during" "$status"
touch "$tmp/go"
wait $writer
check "  and the writer commits" sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ]' "$?" "$tmp/writer.out"

# ---- an ACL edited in place: the same token, the ACL the remote enforces ----
acl_is() { sh -c '[ "$0" = 200 ] && grep -qF "\"token\":\"$1\",\"acl\":$2}" "$3"' "$status" "$T_WEB" "$1" "$tmp/out"; }
run creds update "$WEB" --acl 'bind:*.example.org' --acl 'bind:api.example.net'
ureq "$S" "/v1/credentials/$WEB/token"
check "ACL edited, not synced: the same token with the ACL the remote still has" \
    acl_is '["bind:*.example.com"]'
start_server agent || exit 1
run sync
check "  the sync sends it (a PATCH)" grep -q "; [0-9]* updated" "$tmp/out"
stop_server
ureq "$S" "/v1/credentials/$WEB/token"
check "  after the sync: the same token with the new ACL" \
    acl_is '["bind:*.example.org","bind:api.example.net"]'

# ---- stop ----
stop_agent a
check "SIGTERM: exit 0" status_is 0
check "SIGTERM: socket file removed" [ ! -e "$S" ]
check "SIGTERM: ready file removed" [ ! -e "$tmp/a.ready" ]
check "SIGTERM: counters printed" grep -q 'stopped (SIGTERM): [0-9]* requests, [0-9]* token lookups, [0-9]* refused' "$tmp/a.log"

# ---- uids ----
start_agent u --listen "unix:$tmp/run/u.sock" --allow-uid 4242
ureq "$sock" /v1/tokens/web
check "a uid not allowed: 403 naming --allow-uid" sh -c '[ "$0" = 403 ] && grep -q "uid $1 may not ask" "$2" && ! grep -qF "$3" "$2"' \
    "$status" "$(id -u)" "$tmp/out" "$T_WEB"
ureq "$sock" /healthz
check "  /healthz still answers it" is 200
check "  refusal logged with the uid" grep -q "refused peer=uid:$(id -u) path=\"/v1/tokens/web\" status=403" "$tmp/u.log"
stop_agent u
start_agent u2 --listen "unix:$tmp/run/u.sock" --allow-uid 4242 --allow-uid "$(id -u)"
ureq "$sock" /v1/tokens/web
check "allowed among several uids: 200" is 200
stop_agent u2

# ---- rate ----
start_agent r --listen "unix:$tmp/run/r.sock" --rate 1
# The burst of 2 is spent by the first two; a third that finds the bucket empty
# is refused. Up to 8 asks: on a loaded machine a second may pass between two,
# which refills one (never an assertion on time).
codes=""
for i in 1 2 3 4 5 6 7 8; do
    ureq "$sock" /v1/tokens/web
    codes="$codes $status"
    [ "$status" = 429 ] && break
done
check "rate 1/s (burst 2): 200 200, then a 429 ($codes)" \
    sh -c 'case "$0" in " 200 200"*" 429") exit 0 ;; esac; exit 1' "$codes"
check "429: ERR_RATE_LIMITED with Retry-After" sh -c 'grep -q "ERR_RATE_LIMITED" "$0" && tr -d "\r" <"$1" | grep -q "^Retry-After: [1-9]"' "$tmp/out" "$tmp/hdr"
stop_agent r

# ---- a flood of refusals does not flood the log ----
start_agent f --listen "unix:$tmp/run/f.sock" --rate 0
urls=$(i=0; while [ $i -lt 300 ]; do printf 'http://localhost/v1/tokens/web '; i=$((i + 1)); done)
# One curl, one connection, 300 refused requests.
curl -sS --max-time 60 --unix-socket "$sock" -H 'X-Forwarded-For: 203.0.113.9' \
    -w '\n%{http_code}\n' $urls >"$tmp/flood.out" 2>"$tmp/err"
check "300 relayed requests: 300 refusals" [ "$(grep -cx 403 "$tmp/flood.out")" = 300 ]
logged=$(grep -c 'refused peer=uid:' "$tmp/f.log")
check "  at most a burst of them logged ($logged lines)" sh -c '[ "$0" -ge 20 ] && [ "$0" -lt 300 ]' "$logged"
# Once the burst refills, the next refusal logged says how many were left out. The
# allowance may refill during the flood itself (a slow build), so poll until the
# books balance: every refusal sent is a line, or counted in a later line.
sent=300
accounted() {
    logged=$(grep -c 'refused peer=uid:' "$tmp/f.log")
    dropped=$(sed -n 's/.*(\([0-9]*\) earlier refusals not logged)$/\1/p' "$tmp/f.log" |
        awk '{ n += $1 } END { print n + 0 }')
    [ $((logged + dropped)) = "$sent" ]
}
i=0
while ! { grep -q 'earlier refusals not logged' "$tmp/f.log" && accounted; } && [ $i -lt 40 ]; do
    ureq "$sock" /v1/tokens/web -H 'Origin: null'
    sent=$((sent + 1))
    sleep 0.25
    i=$((i + 1))
done
accounted
check "  every refusal is a line or counted in one ($logged + $dropped = $sent)" [ $((logged + dropped)) = "$sent" ]
stop_agent f
check "  and the counters count them all" grep -q "[0-9]* token lookups, $sent refused" "$tmp/f.log"

# ---- another user, for real (as root: curl runs as nobody) ----
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
    nuid=$(id -u nobody)
    # nreq SOCKET PATH: GET as nobody; body in $tmp/out, status in $status.
    nreq() {
        setpriv --reuid="$nuid" --regid="$(id -g nobody)" --clear-groups \
            curl -sS --max-time 10 -w '\n%{http_code}' --unix-socket "$1" "http://localhost$2" \
            >"$tmp/nreq.raw" 2>"$tmp/err"
        status=$(tail -n 1 "$tmp/nreq.raw")
        sed '$d' "$tmp/nreq.raw" >"$tmp/out"
    }
    chmod 711 "$tmp"
    mkdir -p "$tmp/peers" && chmod 700 "$tmp/peers"
    start_agent o --listen "unix:$tmp/peers/o.sock"
    nreq "$sock" /v1/tokens/web
    check "nobody, socket 0600 in a 0700 directory: cannot even connect" is 000
    chmod 666 "$sock"
    nreq "$sock" /v1/tokens/web
    check "  the 0700 directory alone keeps it out" is 000
    chmod 711 "$tmp/peers"
    nreq "$sock" /v1/tokens/web
    check "  let through the modes: SO_PEERCRED says uid $nuid, 403" sh -c '[ "$0" = 403 ] && grep -q "uid $1 may not ask" "$2" && ! grep -qF "$3" "$2"' \
        "$status" "$nuid" "$tmp/out" "$T_WEB"
    nreq "$sock" "/v1/credentials/$WEB/token"
    check "  by id too: 403, no token" sh -c '[ "$0" = 403 ] && ! grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
    nreq "$sock" /credentials
    check "  nor the mirror: 403" is 403
    nreq "$sock" /healthz
    check "  /healthz answers it" is 200
    check "  refusals logged with its uid" grep -q "refused peer=uid:$nuid path=\"/v1/tokens/web\" status=403" "$tmp/o.log"
    stop_agent o
    start_agent o2 --listen "unix:$tmp/peers/o.sock" --allow-uid "$nuid"
    chmod 666 "$sock"
    nreq "$sock" /v1/tokens/web
    check "--allow-uid $nuid: nobody gets the token" sh -c '[ "$0" = 200 ] && grep -qF "$1" "$2"' "$status" "$T_WEB" "$tmp/out"
    ureq "$sock" /v1/tokens/web
    check "  and the owner, not listed, does not" is 403
    check "  audit names uid $nuid" grep -q "token peer=uid:$nuid by=name name=\"web\" cred=$WEB result=ok" "$tmp/o2.log"
    stop_agent o2
    chmod 700 "$tmp/peers" "$tmp"
    cp "$KEY" "$tmp/keys/theirs.key"
    chown nobody "$tmp/keys/theirs.key"
    run agent --listen tcp:127.0.0.1:0 --key-file "$tmp/keys/theirs.key"
    check "a key file of another user: exit 2" refused 2 'belongs to another user'
else
    skip "another user" "needs root and setpriv to run a client as nobody"
fi

# ---- default socket, refusals at start ----
export XDG_RUNTIME_DIR="$tmp/xdg"
start_agent d
check "default socket: \$XDG_RUNTIME_DIR/rampart/agent.sock" [ "$sock" = "$tmp/xdg/rampart/agent.sock" ]
check "  its directory created 0700" [ "$(stat -c %a "$tmp/xdg/rampart")" = 700 ]
ureq "$sock" /v1/tokens/web
check "  answers" is 200
stop_agent d
check "  no key file made without TCP" [ ! -e "$XDG_CONFIG_HOME/rampart/agent.key" ]

run agent --listen tcp:0.0.0.0:0 --key-file "$tmp/keys/never.key"
check "non-loopback TCP: exit 2, says loopback" refused 2 'not a loopback address'
check "  and makes no key file" [ ! -e "$tmp/keys/never.key" ]
run agent --listen tcp:192.168.1.10:8080
check "a LAN address: exit 2" refused 2 'loopback'
run agent --listen tcp:[::]:0
check "[::]: exit 2" refused 2 'loopback'
run agent --listen udp:1
check "unknown listener kind: exit 2" refused 2 'tcp:HOST:PORT or unix:PATH'
chmod 644 "$KEY"
run agent --listen tcp:127.0.0.1:0 --key-file "$KEY"
check "key file readable by others: exit 2, says chmod" refused 2 'chmod 600'
chmod 600 "$KEY"
printf 'short\n' >"$tmp/keys/short.key"
chmod 600 "$tmp/keys/short.key"
run agent --listen tcp:127.0.0.1:0 --key-file "$tmp/keys/short.key"
check "a key file without a usable key: exit 2" refused 2 'no usable key'
mkdir -p "$tmp/open" && chmod 777 "$tmp/open"
run agent --listen "unix:$tmp/open/a.sock"
check "socket directory writable by others: exit 2" refused 2 'can be written by others'
run agent --rate fast
check "bad --rate: exit 2" refused 2 '\-\-rate'
run agent --allow-uid root
check "bad --allow-uid: exit 2" refused 2 'numeric uid'
run agent --listen unix:/a --listen unix:/b --listen unix:/c --listen unix:/d --listen unix:/e
check "five listeners: exit 2" refused 2 'at most 4'
run agent --help
check "--help shows the default key path" out_has "Default: $XDG_CONFIG_HOME/rampart/agent.key"
run --help
check "the overview lists agent" out_has '^  agent '

check "no sanitizer report in any agent log" no_sanitizer_reports
checks_done
