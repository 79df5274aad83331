#!/bin/sh
# Conformance of `rampart serve-api`: real server processes on loopback, driven with
# curl. Every route, status, header and body shape; pagination over many pages;
# the gate (key, version header); each fault of --faults seen from the client.
. "$(dirname "$0")/lib.sh"

export LC_ALL=C # byte order: ids are base62, which sorts like ASCII
KEY="test-key-$$-x9"
export RAMPART_SERVE_API_KEY="$KEY"
P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
P2=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b
servers=""
# The key reaches curl through a config file, not its argv.
printf 'header = "Authorization: Bearer %s"\nheader = "Service-Version: 2"\n' "$KEY" >"$tmp/auth.curl"

stop_all() {
    for p in $servers; do kill -TERM "$p" 2>/dev/null; done
    for p in $servers; do wait "$p" 2>/dev/null; done
}
trap 'stop_all; rm -rf "$tmp"' EXIT INT TERM

# start NAME ARGS...: a server on a free loopback port with its own database; waits
# for its ready file. Sets $pid_NAME, $addr (host:port) and $base.
start() {
    name=$1
    shift
    rm -f "$tmp/$name.ready"
    "$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$tmp/$name.db" \
        --ready-file "$tmp/$name.ready" "$@" 2>"$tmp/$name.log" &
    eval "pid_$name=$!"
    servers="$servers $!"
    i=0
    while [ ! -s "$tmp/$name.ready" ] && [ $i -lt 400 ]; do
        grep -q '^rampart:' "$tmp/$name.log" && break # it refused to start
        sleep 0.05
        i=$((i + 1))
    done
    addr=$(cat "$tmp/$name.ready" 2>/dev/null)
    base="http://$addr"
}

# stop NAME: SIGTERM, then $status is the server's exit status.
stop() {
    eval "p=\$pid_$1"
    kill -TERM "$p"
    wait "$p"
    status=$?
}

# req METHOD URL [BODY] [extra curl args...]: one request with the key and the
# version header. Body in $tmp/out, headers in $tmp/hdr, curl's stderr in $tmp/err,
# the HTTP status in $status (000 when no reply), curl's exit status in $crc.
req() {
    method=$1
    url=$2
    shift 2
    body=
    if [ $# -gt 0 ]; then
        body=$1
        shift
    fi
    if [ -n "$body" ]; then
        set -- -H 'Content-Type: application/json' --data-binary "$body" "$@"
    fi
    status=$(curl -sS -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -X "$method" \
        -K "$tmp/auth.curl" "$@" "$url" 2>"$tmp/err")
    crc=$?
}

# creates URL < BODIES: POST each line of stdin (a JSON body) to URL from one curl
# process over one kept-alive connection; the statuses, one a line, in $tmp/codes.
# ("next" resets curl's options: each request repeats the headers.)
creates() {
    : >"$tmp/batch.curl"
    while IFS= read -r line; do
        [ -s "$tmp/batch.curl" ] && echo next >>"$tmp/batch.curl"
        cat "$tmp/auth.curl" >>"$tmp/batch.curl"
        esc=$(printf '%s' "$line" | sed 's/\\/\\\\/g; s/"/\\"/g')
        printf 'url = "%s"\nheader = "Content-Type: application/json"\ndata-binary = "%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' \
            "$1" "$esc" >>"$tmp/batch.curl"
    done
    curl -sS -K "$tmp/batch.curl" >"$tmp/codes" 2>"$tmp/err"
}
count_201() { grep -c '^201$' "$tmp/codes"; }

# raw METHOD URL CURL-ARGS...: like req, without the default headers.
raw() {
    method=$1
    url=$2
    shift 2
    status=$(curl -sS -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -X "$method" "$@" \
        "$url" 2>"$tmp/err")
    crc=$?
}

is() { [ "$status" = "$1" ]; }
hdr_has() { tr -d '\r' <"$tmp/hdr" | grep -qi -e "$1"; }
body_empty() { [ ! -s "$tmp/out" ]; }
crc_is() { [ "$crc" -eq "$1" ]; }
# retry_after_is VALUE: a 429 whose Retry-After header is VALUE ("": none at all).
retry_after_is() {
    is 429 || return 1
    if [ -n "$1" ]; then
        tr -d '\r' <"$tmp/hdr" | grep -q "^Retry-After: $1\$"
    else
        ! tr -d '\r' <"$tmp/hdr" | grep -qi '^Retry-After'
    fi
}
# The first "NAME":"value" of the body.
field() { grep -o "\"$1\":\"[^\"]*\"" "$tmp/out" | head -n 1 | sed 's/^"[^"]*":"//; s/"$//'; }
# An error body in the API's shape, with its operation id also in the header.
error_shape() {
    op=$(field operation_id)
    out_has "^{\"error_code\":\"$1\",\"status_code\":$2,\"msg\":\"[^\"]" &&
        out_has "\"details\":{\"operation_id\":\"op_[0-9A-Za-z]\{27\}\"}}$" &&
        hdr_has "^Operation-Id: $op$"
}

rule() { printf '{"cidr":"%s","ip_policy_id":"%s","action":"%s"%s}' "$1" "$2" "$3" "${4:-}"; }

# ---- start-up ----
start s1
if [ -z "$addr" ]; then
    fail "serve-api did not start"
    sed 's/^/#   /' "$tmp/s1.log"
    exit 1
fi
check "ready file holds 127.0.0.1:PORT" sh -c "grep -qx '127\\.0\\.0\\.1:[1-9][0-9]*' '$tmp/s1.ready'"
check "stderr says where it listens" grep -q "listening on tcp:$addr" "$tmp/s1.log"
check "database file is 0600" [ "$(stat -c %a "$tmp/s1.db")" = 600 ]
B1=$base

# ---- rules: create ----
req POST "$B1/ip_policy_rules" "$(rule 10.0.0.0/8 $P1 allow ',"description":"office","metadata":"{\"k\":1}"')"
check "create rule: 201" is 201
check "create rule: JSON content type" hdr_has '^Content-Type: application/json'
RID=$(field id)
check "create rule: id ipr_ + 27 base62" sh -c "echo '$RID' | grep -qx 'ipr_[0-9A-Za-z]\{27\}'"
check "create rule: absolute uri" out_has "\"uri\":\"$B1/ip_policy_rules/$RID\""
check "create rule: created_at RFC 3339 UTC" out_has '"created_at":"[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"'
check "create rule: ip_policy ref with uri" out_has "\"ip_policy\":{\"id\":\"$P1\",\"uri\":\"$B1/ip_policies/$P1\"}"
check "create rule: fields in API order" out_has '^{"id":.*"uri":.*"created_at":.*"description":"office","metadata":"{\\"k\\":1}","cidr":"10.0.0.0/8","ip_policy":.*"action":"allow"}$'

req POST "$B1/ip_policy_rules" "$(rule 2001:DB8::/32 $P2 deny)"
check "IPv6 rule: 201, stored lower-case" replied 201 '"cidr":"2001:db8::/32"'
check "no description: field omitted" out_lacks '"description"'
req POST "$B1/ip_policy_rules" "$(rule 192.168.0.0/16 $P1 deny ',"colour":"blue"')"
check "unknown field ignored: 201" is 201

req POST "$B1/ip_policy_rules" "$(rule 10.0.0.1/8 $P1 allow)"
check "host bits: 400 with the suggestion" replied 400 'host bits set: did you mean 10.0.0.0/8?'
check "host bits: error body shape + Operation-Id header" error_shape ERR_VALIDATION 400
req POST "$B1/ip_policy_rules" "$(rule 10.1.2.3 $P1 allow)"
check "mask missing: 400" replied 400 'mask'
req POST "$B1/ip_policy_rules" "$(rule 10.0.0.0/8 $P1 deny)"
check "duplicate CIDR in a policy: 400 naming the rule" sh -c '[ "$0" = 400 ] && grep -q "already has a rule for 10.0.0.0/8 ($1)" "$2"' "$status" "$RID" "$tmp/out"
req POST "$B1/ip_policy_rules" "$(rule 10.0.0.0/8 $P2 deny)"
check "same CIDR in another policy: 201" is 201
req POST "$B1/ip_policy_rules" "$(rule 11.0.0.0/8 $P1 block)"
check "bad action: 400" replied 400 'allow or deny'
req POST "$B1/ip_policy_rules" "$(rule 11.0.0.0/8 pol_1 allow)"
check "bad policy id: 400 naming ipp_" replied 400 'ipp_'
req POST "$B1/ip_policy_rules" '{"cidr":"11.0.0.0/8","ip_policy_id":'
check "bad JSON: 400 ERR_INVALID_BODY" error_shape ERR_INVALID_BODY 400
req POST "$B1/ip_policy_rules" "{\"cidr\":11,\"ip_policy_id\":\"$P1\",\"action\":\"allow\"}"
check "wrong type: 400 naming the field" replied 400 'cidr: expected a string, got a number'
req POST "$B1/ip_policy_rules" "{\"ip_policy_id\":\"$P1\",\"action\":\"allow\"}"
check "missing cidr: 400" replied 400 'cidr: missing'
req POST "$B1/ip_policy_rules" "" -H 'Content-Type: application/json'
check "empty body: 400" is 400
long=$(printf 'x%.0s' $(seq 256))
req POST "$B1/ip_policy_rules" "$(rule 12.0.0.0/8 $P1 allow ",\"description\":\"$long\"")"
check "256-byte description: 400" replied 400 '255'
head -c 2000000 /dev/zero | tr '\0' 'x' >"$tmp/big"
req POST "$B1/ip_policy_rules" "" --data-binary "@$tmp/big"
check "2 MB body: 413" error_shape ERR_TOO_LARGE 413
req POST "$B1/ip_policy_rules" "" -H "Transfer-Encoding: chunked" --data-binary "@$tmp/big"
check "2 MB chunked body (no length given): 413 once read" error_shape ERR_TOO_LARGE 413
head -c 8000000 /dev/zero >"$tmp/huge"
req POST "$B1/ip_policy_rules" "" -H "Transfer-Encoding: chunked" --data-binary "@$tmp/huge"
check "a chunked body that goes on far past the cap: cut off (curl 52 or 55/56)" \
    sh -c '[ "$0" -ne 0 ] && [ "$1" != 413 ]' "$crc" "$status"

# ---- rules: get / delete ----
req GET "$B1/ip_policy_rules/$RID"
check "get rule: 200 with the same object" sh -c '[ "$0" = 200 ] && grep -q "^{\"id\":\"$1\",\"uri\":\"$2/ip_policy_rules/$1\"" "$3"' "$status" "$RID" "$B1" "$tmp/out"
req GET "$B1/ip_policy_rules/ipr_0000000000000000000000000zz"
check "get unknown id: 404" error_shape ERR_NOT_FOUND 404
req GET "$B1/ip_policy_rules/not-an-id"
check "get bad id shape: 404" is 404
req GET "$B1/ip_policy_rules/cr_0000000000000000000000000zz"
check "get credential id on rules: 404" is 404
req DELETE "$B1/ip_policy_rules/$RID"
check "delete rule: 204" is 204
check "delete rule: empty body" body_empty
req DELETE "$B1/ip_policy_rules/$RID"
check "delete again: 404" error_shape ERR_NOT_FOUND 404
req GET "$B1/ip_policy_rules/$RID"
check "get deleted: 404" is 404
req POST "$B1/ip_policy_rules" "$(rule 10.0.0.0/8 $P1 deny)"
check "CIDR free again after delete: 201" is 201

# ---- routing ----
req PUT "$B1/ip_policy_rules"
check "PUT on a collection: 405" error_shape ERR_METHOD_NOT_ALLOWED 405
check "405: Allow lists the methods" hdr_has '^Allow: POST, GET$'
req PUT "$B1/ip_policy_rules/$RID" '{"description":"x"}'
check "PUT on a rule: 405 with Allow: GET, PATCH, DELETE" sh -c '[ "$0" = 405 ] && tr -d "\r" <"$1" | grep -q "^Allow: GET, PATCH, DELETE$"' "$status" "$tmp/hdr"
req GET "$B1/nope"
check "unknown path: 404" error_shape ERR_NOT_FOUND 404
req GET "$B1/ip_policy_rules/"
check "trailing slash: 404" is 404
req GET "$B1/ip_policy_rules/$RID/more"
check "extra segment: 404" is 404

# ---- the gate ----
raw GET "$B1/ip_policy_rules" -H "Service-Version: 2"
check "no Authorization: 401" error_shape ERR_UNAUTHORIZED 401
check "401: WWW-Authenticate: Bearer" hdr_has '^WWW-Authenticate: Bearer'
raw GET "$B1/ip_policy_rules" -H "Authorization: Bearer ${KEY}x" -H "Service-Version: 2"
check "wrong key: 401" is 401
raw GET "$B1/ip_policy_rules" -H "Authorization: Bearer x${KEY%?}" -H "Service-Version: 2"
check "same-length wrong key: 401" is 401
raw GET "$B1/ip_policy_rules" -H "Authorization: Basic $KEY" -H "Service-Version: 2"
check "other scheme: 401" is 401
raw GET "$B1/nope" -H "Authorization: Bearer nope"
check "401 comes before 404" is 401
raw DELETE "$B1/ip_policy_rules" -H "Authorization: Bearer nope"
check "401 comes before 405" is 401
raw POST "$B1/ip_policy_rules" -H "Authorization: Bearer nope" --data-binary "@$tmp/big"
check "401 comes before 413" is 401
raw GET "$B1/ip_policy_rules" -H "authorization: bearer $KEY" -H "service-version: 2"
check "header names and scheme are case-insensitive" is 200
raw GET "$B1/ip_policy_rules" -H "Authorization: Bearer $KEY"
check "missing version header: 400" error_shape ERR_VERSION 400
check "missing version header: names it" out_has 'Service-Version'
raw GET "$B1/ip_policy_rules" -H "Authorization: Bearer $KEY" -H "Service-Version: 3"
check "version 3: 400" error_shape ERR_VERSION 400
check "the key is never logged" sh -c "! grep -q -e '$KEY' '$tmp/s1.log'"
check "one log line per request: method path status ms client" grep -q '^GET /ip_policy_rules/ipr_[0-9A-Za-z]* 404 [0-9.]*ms client=curl/[0-9.]*$' "$tmp/s1.log"

# ---- list query ----
for q in "limit=0" "limit=101" "limit=abc" "limit=-1" "limit=" "limit=1&limit=2" \
         "before_id=nope" "before_id=cr_abc" "before_id="; do
    req GET "$B1/ip_policy_rules?$q"
    check "list ?$q: 400" error_shape ERR_INVALID_QUERY 400
done
req GET "$B1/ip_policy_rules?foo=1"
check "unknown query parameter: 400 naming the supported ones" replied 400 'unknown query parameter .foo.: the supported ones are limit and before_id'
req GET "$B1/credentials?limit=5&page=2"
check "unknown parameter on credentials: 400" is 400
req GET "$B1/ip_policy_rules?limit=100&before_id=ipr_0"
check "before_id before everything: empty last page" out_has '^{"ip_policy_rules":\[\],"uri":"[^"]*","next_page_uri":null}$'

# ---- credentials ----
req POST "$B1/credentials" '{"description":"agent one","acl":["bind:*.example.com","bind:env=prod"]}'
check "create credential: 201" is 201
CID=$(field id)
TOKEN=$(field token)
check "credential id cr_ + 27 base62" sh -c "echo '$CID' | grep -qx 'cr_[0-9A-Za-z]\{27\}'"
check "token is <id body>_<21 base62>" sh -c "echo '$TOKEN' | grep -qx '${CID#cr_}_[0-9A-Za-z]\{21\}'"
check "owner defaults to the key's user" out_has '"owner_id":"usr_2Rampart0Reference0Server00"'
check "acl as sent" out_has '"acl":\["bind:\*.example.com","bind:env=prod"\]'
check "credential uri absolute" out_has "\"uri\":\"$B1/credentials/$CID\""
req GET "$B1/credentials/$CID"
check "get credential: 200, token null" replied 200 '"token":null'
check "get credential: token nowhere" out_lacks "$TOKEN"
req GET "$B1/credentials"
check "list credentials: token null, never the token" sh -c '[ "$0" = 200 ] && grep -q "\"token\":null" "$1" && ! grep -q "$2" "$1"' "$status" "$tmp/out" "$TOKEN"
check "list credentials: shape" out_has "^{\"credentials\":\[{.*}\],\"uri\":\"$B1/credentials\",\"next_page_uri\":null}$"
req POST "$B1/credentials" '{}'
check "empty credential: 201 with acl []" replied 201 '"acl":\[\]'
req POST "$B1/credentials" '{"owner_id":"bot_2VhYfCwqPkX0n4sF5nYfW3eJb1a"}'
check "another owner (admin key): 201" replied 201 '"owner_id":"bot_2VhYfCwqPkX0n4sF5nYfW3eJb1a"'
req POST "$B1/credentials" '{"owner_id":"team_1"}'
check "bad owner: 400" error_shape ERR_VALIDATION 400
req POST "$B1/credentials" '{"acl":["connect:foo"]}'
check "bad ACL rule: 400" replied 400 'acl rule'
req POST "$B1/credentials" '{"acl":"bind:x"}'
check "acl not an array: 400" error_shape ERR_INVALID_BODY 400
req POST "$B1/credentials" '{"token":"mine"}'
check "a token in the request is ignored" replied_without 201 '"token":"mine"'
req DELETE "$B1/credentials/$CID"
check "delete credential: 204, empty" sh -c '[ "$0" = 204 ] && [ ! -s "$1" ]' "$status" "$tmp/out"
req DELETE "$B1/credentials/$CID"
check "delete credential again: 404" is 404
req GET "$B1/credentials/$CID"
check "get deleted credential: 404" is 404

# ---- pagination: 150 rules, limits 1, 7, 100 and the default ----
start s2
B2=$base
for i in $(seq 0 149); do rule "10.$((i / 256)).$((i % 256)).0/24" $P1 allow; echo; done |
    creates "$B2/ip_policy_rules"
check "150 creates: all 201" [ "$(count_201)" -eq 150 ]

# walk URL PREFIX LIMIT: follow next_page_uri from URL; ids in $tmp/ids, $pages,
# $walk_ok (every page 200, at most LIMIT items, next_page_uri exactly
# $base_walk?before_id=<last id of the page>&limit=LIMIT, null on the last page).
# Pages are kept one a line and checked together afterwards: fewer processes.
walk() {
    url=$1
    : >"$tmp/pages"
    pages=0
    walk_ok=true
    while [ -n "$url" ] && [ $pages -le 1000 ]; do
        req GET "$url"
        [ "$status" = 200 ] || { walk_ok=false; return; }
        pages=$((pages + 1))
        { cat "$tmp/out"; echo; } >>"$tmp/pages"
        url=$(sed -n 's/.*"next_page_uri":"\([^"]*\)"}$/\1/p' "$tmp/out")
    done
    grep -o "\"id\":\"$2_[0-9A-Za-z]*\"" "$tmp/pages" | sed 's/^"id":"//; s/"$//' >"$tmp/ids"
    awk -v pfx="\"id\":\"$2_" -v base="$base_walk" -v lim="$3" -v n="$pages" '
        {
            count = 0; last = ""; rest = $0
            while ((i = index(rest, pfx)) > 0) {
                rest = substr(rest, i + 6); count++
                last = substr(rest, 1, index(rest, "\"") - 1)
            }
            want = NR < n ? "\"next_page_uri\":\"" base "?before_id=" last "&limit=" lim "\"}" \
                          : "\"next_page_uri\":null}"
            if (count > lim || substr($0, length($0) - length(want) + 1) != want) bad = 1
        }
        END { exit bad }' "$tmp/pages" || walk_ok=false
}
newest_first() { sort -r "$tmp/ids" | cmp -s - "$tmp/ids"; }
no_duplicates() { [ "$(sort -u "$tmp/ids" | wc -l)" -eq "$(wc -l <"$tmp/ids")" ]; }
count_is() { [ "$(wc -l <"$tmp/ids")" -eq "$1" ]; }

base_walk="$B2/ip_policy_rules"
for lim in 1 7 100; do
    walk "$B2/ip_policy_rules?limit=$lim" ipr "$lim"
    check "limit=$lim: every page 200, next_page_uri exact" $walk_ok
    check "limit=$lim: 150 rules exactly" count_is 150
    check "limit=$lim: no duplicates" no_duplicates
    check "limit=$lim: newest first" newest_first
    check "limit=$lim: $(((150 + lim - 1) / lim)) pages" [ "$pages" -eq $(((150 + lim - 1) / lim)) ]
done
req GET "$B2/ip_policy_rules"
check "default limit: 100 items" [ "$(grep -o '"id":"ipr_' "$tmp/out" | wc -l)" -eq 100 ]
check "default limit: next_page_uri carries limit=100" out_has '"next_page_uri":"[^"]*&limit=100"}$'
first=$(grep -o '"id":"ipr_[0-9A-Za-z]*"' "$tmp/out" | head -n 1 | sed 's/^"id":"//; s/"$//')
req POST "$B2/ip_policy_rules" "$(rule 172.16.0.0/12 $P2 allow)"
newest=$(field id)
sorts_last() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort | tail -n 1)" = "$2" ]; }
check "a new rule sorts after the others" sorts_last "$first" "$newest"
req GET "$B2/ip_policy_rules?limit=1"
check "the newest rule comes first" out_has "^{\"ip_policy_rules\":\[{\"id\":\"$newest\""

for i in $(seq 1 12); do echo "{\"description\":\"c$i\",\"acl\":[\"bind:c$i.example.com\"]}"; done |
    creates "$B2/credentials"
check "12 credential creates: all 201" [ "$(count_201)" -eq 12 ]
base_walk="$B2/credentials"
walk "$B2/credentials?limit=5" cr 5
check "credentials limit=5: 12 in 3 pages, newest first, no duplicates" \
    sh -c '[ "$0" = true ] && [ "$1" -eq 3 ] && [ "$(wc -l <"$2")" -eq 12 ] && sort -r "$2" | cmp -s - "$2"' \
    "$walk_ok" "$pages" "$tmp/ids"

# ---- version header settings ----
start lenient --accept-missing-version
raw GET "$base/ip_policy_rules" -H "Authorization: Bearer $KEY"
check "--accept-missing-version: missing header accepted" is 200
raw GET "$base/ip_policy_rules" -H "Authorization: Bearer $KEY" -H "Service-Version: 3"
check "--accept-missing-version: version 3 still 400" is 400
start custom --version-header X-Api-Version
raw GET "$base/ip_policy_rules" -H "Authorization: Bearer $KEY" -H "X-Api-Version: 2"
check "--version-header: custom name accepted" is 200
raw GET "$base/ip_policy_rules" -H "Authorization: Bearer $KEY" -H "Service-Version: 2"
check "--version-header: the default name no longer counts" replied 400 'X-Api-Version'

# ---- faults, seen from the client ----
start faulty --faults 'create_rule:drop@1,create_rule:reset@2,create_rule:500@3,create_cred:truncate@1,create_cred:429@2,delete_rule:reset@1,list_rules:500@1,list_creds:502@1,get_rule:429@1:retry-after=2,get_rule:429@2,get_cred:delay=200@1'
BF=$base
req POST "$BF/ip_policy_rules" "$(rule 10.1.0.0/16 $P1 allow)"
check "drop: curl sees an empty reply (52)" crc_is 52
req POST "$BF/ip_policy_rules" "$(rule 10.2.0.0/16 $P1 allow)"
check "reset: curl sees a reset (56)" crc_is 56
req POST "$BF/ip_policy_rules" "$(rule 10.3.0.0/16 $P1 allow)"
check "500: refused" error_shape ERR_INTERNAL 500
req POST "$BF/credentials" '{"description":"cut short"}'
check "truncate: curl sees a short body (18)" crc_is 18
req POST "$BF/credentials" '{"description":"rate limited"}'
check "429 without retry-after: no Retry-After header" retry_after_is ""
check "429: error body" error_shape ERR_RATE_LIMITED 429
req GET "$BF/ip_policy_rules"
check "list_rules:500@1: 500" is 500
req GET "$BF/ip_policy_rules"
check "drop and reset committed the creates; 500 did not" \
    sh -c '[ "$0" = 200 ] && grep -q "10.1.0.0/16" "$1" && grep -q "10.2.0.0/16" "$1" && ! grep -q "10.3.0.0/16" "$1"' "$status" "$tmp/out"
DROPPED=$(sed -n 's/.*"id":"\(ipr_[0-9A-Za-z]*\)"[^}]*"cidr":"10.1.0.0\/16".*/\1/p' "$tmp/out")
req GET "$BF/credentials"
check "list_creds:502@1: 502" error_shape ERR_BAD_GATEWAY 502
req GET "$BF/credentials"
check "truncate committed the create; 429 did not" \
    sh -c '[ "$0" = 200 ] && grep -q "cut short" "$1" && ! grep -q "rate limited" "$1"' "$status" "$tmp/out"
TRUNC=$(field id)
req DELETE "$BF/ip_policy_rules/$DROPPED"
check "delete with reset: curl sees a reset (56)" crc_is 56
req GET "$BF/ip_policy_rules/$DROPPED"
check "429 with retry-after=2: Retry-After: 2" retry_after_is 2
req GET "$BF/ip_policy_rules/$DROPPED"
check "second 429: no Retry-After" retry_after_is ""
req GET "$BF/ip_policy_rules/$DROPPED"
check "the reset delete was committed: 404" is 404
req GET "$BF/credentials/$TRUNC"
check "delay: then a normal reply" is 200
check "faults are logged" sh -c "grep -q '^POST /ip_policy_rules 201 .*fault=drop' '$tmp/faulty.log' && grep -q 'fault=reset' '$tmp/faulty.log' && grep -q 'fault=truncate' '$tmp/faulty.log'"
check "stderr shows the faults in effect" grep -q 'faults create_rule:drop@1' "$tmp/faulty.log"

# ---- unix socket, base URL ----
rm -f "$tmp/api.sock"
"$RAMPART" serve-api --listen "unix:$tmp/api.sock" --db "$tmp/unix.db" \
    --ready-file "$tmp/unix.ready" --base-url https://api.example.test/ 2>"$tmp/unix.log" &
pid_unix=$!
servers="$servers $pid_unix"
i=0
while [ ! -s "$tmp/unix.ready" ] && [ $i -lt 400 ] && ! grep -q '^rampart:' "$tmp/unix.log"; do
    sleep 0.05
    i=$((i + 1))
done
check "unix: ready file holds the socket path" [ "$(cat "$tmp/unix.ready")" = "$tmp/api.sock" ]
check "unix: socket mode 0600" [ "$(stat -c %a "$tmp/api.sock")" = 600 ]
req POST "http://localhost/ip_policy_rules" "$(rule 10.9.0.0/16 $P1 allow)" --unix-socket "$tmp/api.sock"
check "unix: create works" is 201
check "--base-url: uris use it (no double slash)" out_has '"uri":"https://api.example.test/ip_policy_rules/ipr_'
stop unix
check "unix: clean stop, exit 0" is 0
check "unix: socket file removed" [ ! -e "$tmp/api.sock" ]

# ---- key sources ----
printf '%s\n' "$KEY" >"$tmp/key"
chmod 600 "$tmp/key"
unset RAMPART_SERVE_API_KEY
start keyfile --api-key-file "$tmp/key"
raw GET "$base/ip_policy_rules" -H "Authorization: Bearer $KEY" -H "Service-Version: 2"
check "--api-key-file: its first line is the key" is 200
chmod 644 "$tmp/key"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --api-key-file "$tmp/key"
check "--api-key-file readable by others: refused" refused 2 "chmod 600"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --api-key "$KEY"
check "--api-key on argv: refused, says how" refused 2 "RAMPART_SERVE_API_KEY or pass --api-key-file"
check "--api-key refusal does not echo the key" err_lacks "$KEY"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db"
check "no key at all: refused" refused 2 "no API key"
export RAMPART_SERVE_API_KEY="$KEY"
run serve-api --listen tcp:127.0.0.1:0
check "no --db: refused" refused 2 "--db FILE is required"
run serve-api --listen tcp:192.0.2.1:0 --db "$tmp/k.db"
check "non-loopback address: refused" refused 2 "not a loopback address"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --faults 'create_rule:dorp@1'
check "bad --faults: refused naming the part" refused 2 "unknown kind 'dorp'"
run serve-api --listen "tcp:$addr" --db "$tmp/k.db"
check "port in use: exit 1" refused 1 "cannot listen"
run serve-api --help
check "--help documents the fault syntax" sh -c 'grep -q "OP:KIND@SELECT" "$0" && grep -q "retry-after=S" "$0" && grep -q "every=K" "$0"' "$tmp/out"

# ---- clean stop and restart on the same database ----
stop s1
check "SIGTERM: exit 0" is 0
check "ready file removed at exit" [ ! -e "$tmp/s1.ready" ]
check "stop is logged" grep -q '^stopped (SIGTERM)' "$tmp/s1.log"
start s1
req GET "$base/ip_policy_rules"
check "restart on the same database: rules kept" replied 200 '2001:db8::/32'

# ---- the production rate limit (--rate-limit): 429 without Retry-After ----
start rl --rate-limit 3
n=0
while [ $n -lt 3 ]; do
    req GET "$base/ip_policy_rules"
    n=$((n + 1))
done
check "--rate-limit 3: the third request in the window is served" is 200
req GET "$base/ip_policy_rules"
check "--rate-limit 3: the fourth is a 429" is 429
check "... with the API's error body" error_shape ERR_RATE_LIMITED 429
check "... and no Retry-After, like the production service" sh -c '! tr -d "\r" <"$0" | grep -qi "^Retry-After"' "$tmp/hdr"
stop rl
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --rate-limit lots
check "bad --rate-limit: refused" refused 2 "rate-limit takes a whole number"

# --rate-window: the rolling window of the limit. One budget for the account: two
# clients (told apart by their User-Agent in the log) count together, and a
# refused request is not counted.
start rw --rate-limit 2 --rate-window 2
req GET "$base/ip_policy_rules" "" -A "client-one/1"
req GET "$base/ip_policy_rules" "" -A "client-two/1"
check "--rate-window 2: two requests of two clients are served" is 200
req GET "$base/ip_policy_rules" "" -A "client-two/1"
check "... the third, from either client, is a 429" is 429
check "... whose message names the window" out_has "at most 2 per 2 s"
req GET "$base/ip_policy_rules" "" -A "client-one/1"
check "... and so is the next one (a refused request is not counted)" is 429
sleep 2.1 # the window rolls on
req GET "$base/ip_policy_rules" "" -A "client-one/1"
check "... once the oldest request is a window old, served again" is 200
stop rw
check "the log line names the client (its User-Agent)" sh -c \
    "grep -q '^GET /ip_policy_rules 200 [0-9.]*ms client=client-one/1\$' '$tmp/rw.log' && grep -q '^GET /ip_policy_rules 429 [0-9.]*ms client=client-two/1\$' '$tmp/rw.log'"
check "429s per client, counted from the log" sh -c \
    "[ \$(grep -c ' 429 .*client=client-one/1\$' '$tmp/rw.log') = 1 ] && [ \$(grep -c ' 429 .*client=client-two/1\$' '$tmp/rw.log') = 1 ]"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --rate-limit 5 --rate-window 0
check "--rate-window 0: refused" refused 2 "rate-window takes a whole number of seconds"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --rate-limit 5 --rate-window 1m
check "--rate-window 1m: refused" refused 2 "rate-window takes a whole number of seconds"

# ---- trickle=MS: the reply's body one byte every MS ms (a client's low-speed limit) ----
start trickle --faults 'list_rules:trickle=50@1,get_rule:trickle=1000@1+'
req GET "$base/ip_policy_rules"
check "trickle=50: the whole reply arrives, slowly" sh -c \
    '[ "$0" = 200 ] && grep -q "\"next_page_uri\":null}\$" "$1"' "$status" "$tmp/out"
req GET "$base/ip_policy_rules" "" --max-time 5
check "... the next request is not trickled" is 200
req GET "$base/ip_policy_rules/ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1a" "" --speed-limit 10 --speed-time 2
check "trickle=1000 under curl's low-speed limit (10 B/s for 2 s): curl gives up (28)" crc_is 28
check "... headers first, then a byte a second (the 404 body cut short)" sh -c \
    '[ "$0" = 404 ] && [ "$(wc -c <"$1")" -ge 1 ] && [ "$(wc -c <"$1")" -le 4 ]' "$status" "$tmp/out"
curl -sS -o /dev/null -K "$tmp/auth.curl" --max-time 30 \
    "$base/ip_policy_rules/ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1a" 2>/dev/null &
slow=$!
sleep 1 # the reply is under way: a byte a second
t0=$(date +%s)
stop trickle
check "stop does not wait for a trickling reply" [ $(($(date +%s) - t0)) -le 3 ]
wait "$slow"
check "trickle is logged" grep -q '^GET /ip_policy_rules 200 .*fault=trickle client=curl/' "$tmp/trickle.log"
run serve-api --listen tcp:127.0.0.1:0 --db "$tmp/k.db" --faults 'list_rules:trickle=0@1'
check "trickle=0: refused" refused 2 "trickle '0' is not a number of milliseconds"

# ---- a NUL hidden in a query value is refused, not cut short ----
start nul
req GET "$base/ip_policy_rules?limit=1%00"
check "limit=1%00: 400, not a page of 1" is 400
check "... saying why" out_has "NUL character"
req GET "$base/ip_policy_rules?before_id=cr_zzz%00x"
check "before_id with a NUL: 400" is 400

# ---- edits in place (PATCH) ----
start edits
BE=$base
req POST "$BE/ip_policy_rules" "$(rule 10.0.0.0/8 $P1 allow)"
EA=$(field id)
req POST "$BE/ip_policy_rules" "$(rule 10.1.0.0/16 $P1 allow)"
EB=$(field id)
req POST "$BE/ip_policy_rules" "$(rule 10.2.0.0/16 $P1 deny)"
list_ids() { grep -o '"id":"ipr_[0-9A-Za-z]*"' "$tmp/out" | tr '\n' ' '; }
req GET "$BE/ip_policy_rules"
ids_before=$(list_ids)
req PATCH "$BE/ip_policy_rules/$EB" '{"description":"lab"}'
check "PATCH rule description: 200 with the whole object" replied 200 "^{\"id\":\"$EB\",\"uri\":\"$BE/ip_policy_rules/$EB\",\"created_at\":\"[^\"]*\",\"description\":\"lab\",\"cidr\":\"10.1.0.0/16\",\"ip_policy\":{\"id\":\"$P1\",\"uri\":\"[^\"]*\"},\"action\":\"allow\"}$"
req PATCH "$BE/ip_policy_rules/$EB" '{"metadata":"{\"k\":2}"}'
check "PATCH rule metadata: 200, the description kept" replied 200 '"description":"lab","metadata":"{\\"k\\":2}","cidr":"10.1.0.0/16"'
req PATCH "$BE/ip_policy_rules/$EB" '{"cidr":"2001:DB8:1::/48"}'
check "PATCH rule cidr: 200, stored canonical" replied 200 '"metadata":"{\\"k\\":2}","cidr":"2001:db8:1::/48"'
req GET "$BE/ip_policy_rules/$EB"
check "GET after PATCH: every change, action and policy as created" replied 200 '"description":"lab","metadata":"{\\"k\\":2}","cidr":"2001:db8:1::/48","ip_policy":{"id":"'"$P1"'".*"action":"allow"}$'
req GET "$BE/ip_policy_rules"
check "an edit keeps the rule's place in the list (newest first by id)" [ "$(list_ids)" = "$ids_before" ]
for f in action ip_policy_id ip_policy uri created_at; do
    req PATCH "$BE/ip_policy_rules/$EB" "{\"description\":\"x\",\"$f\":\"deny\"}"
    check "PATCH rule $f: 400 naming it" replied 400 "\"msg\":\"$f: cannot be changed"
done
# The official clients send the id in the body too.
req PATCH "$BE/ip_policy_rules/$EB" "{\"id\":\"$EB\",\"description\":\"lab\"}"
check "PATCH with the object's own id in the body: 200" replied 200 '"description":"lab"'
req PATCH "$BE/ip_policy_rules/$EB" '{"id":"ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1z","description":"x"}'
check "PATCH with another id in the body: 400 naming both" replied 400 '"msg":"id: the body names ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1z but the path'
req PATCH "$BE/ip_policy_rules/$EB" '{"colour":"blue"}'
check "PATCH rule, unknown field: 400 naming it" replied 400 '"msg":"colour: unknown field; a rule may change cidr, description, metadata"'
req PATCH "$BE/ip_policy_rules/$EB" '{}'
check "PATCH {}: 400" error_shape ERR_VALIDATION 400
check "PATCH {}: says there is nothing to change" out_has 'nothing to change'
req PATCH "$BE/ip_policy_rules/$EB" ""
check "PATCH without a body: 400" replied 400 'nothing to change'
req PATCH "$BE/ip_policy_rules/ipr_0000000000000000000000000zz" '{"description":"x"}'
check "PATCH unknown rule: 404" error_shape ERR_NOT_FOUND 404
req PATCH "$BE/ip_policy_rules/$EB" '{"cidr":"10.3.0.1/16"}'
check "PATCH bad cidr: 400 with the suggestion" replied 400 'cidr: host bits set: did you mean 10.3.0.0/16?'
req PATCH "$BE/ip_policy_rules/$EB" '{"cidr":"10.0.0.0/8"}'
check "PATCH to a CIDR the policy holds: 400 naming that rule" replied 400 "policy $P1 already has a rule for 10.0.0.0/8 ($EA)"
req PATCH "$BE/ip_policy_rules/$EB" '{"cidr":5}'
check "PATCH wrong type: 400 ERR_INVALID_BODY" error_shape ERR_INVALID_BODY 400
req GET "$BE/ip_policy_rules/$EB"
check "refused edits changed nothing" replied 200 '"description":"lab","metadata":"{\\"k\\":2}","cidr":"2001:db8:1::/48"'

req POST "$BE/credentials" '{"description":"edit me","acl":["bind:a.example.com"]}'
ECR=$(field id)
ETOK=$(field token)
req PATCH "$BE/credentials/$ECR" '{"description":"edited"}'
check "PATCH credential description: 200, token null" replied 200 '"description":"edited","token":null,"acl":\["bind:a.example.com"\]'
req PATCH "$BE/credentials/$ECR" '{"metadata":"m"}'
check "PATCH credential metadata: 200" replied 200 '"description":"edited","metadata":"m","token":null'
req PATCH "$BE/credentials/$ECR" '{"acl":["bind:*.example.com","bind:env=prod"]}'
check "PATCH credential acl: 200" replied 200 '"token":null,"acl":\["bind:\*.example.com","bind:env=prod"\],"owner_id":"usr_'
check "PATCH credential: the token nowhere" out_lacks "$ETOK"
req GET "$BE/credentials/$ECR"
check "GET after PATCH: the credential's changes" replied 200 '"description":"edited","metadata":"m","token":null,"acl":\["bind:\*.example.com","bind:env=prod"\]'
for f in owner_id token uri created_at; do
    req PATCH "$BE/credentials/$ECR" "{\"$f\":\"usr_2VhYfCwqPkX0n4sF5nYfW3eJb1a\"}"
    check "PATCH credential $f: 400 naming it" replied 400 "\"msg\":\"$f: cannot be changed; a credential may change description, acl, metadata"
done
req PATCH "$BE/credentials/$ECR" '{"acl":["connect:foo"]}'
check "PATCH bad ACL rule: 400" replied 400 'acl rule 1: '
req PATCH "$BE/credentials/cr_0000000000000000000000000zz" '{"metadata":"x"}'
check "PATCH unknown credential: 404" error_shape ERR_NOT_FOUND 404
check "the server's token table still holds the token, unchanged" \
    [ "$(sqlite3 "$tmp/edits.db" "SELECT token FROM tokens WHERE cred_id = '$ECR'")" = "$ETOK" ]

raw PATCH "$BE/ip_policy_rules/$EB" -H "Service-Version: 2" -H 'Content-Type: application/json' --data-binary '{"description":"x"}'
check "PATCH without the key: 401" error_shape ERR_UNAUTHORIZED 401
raw PATCH "$BE/ip_policy_rules/$EB" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary '{"description":"x"}'
check "PATCH without the version header: 400" error_shape ERR_VERSION 400
raw PATCH "$BE/ip_policy_rules/$EB" -H "Authorization: Bearer $KEY" -H "Service-Version: 3" -H 'Content-Type: application/json' --data-binary '{"description":"x"}'
check "PATCH with version 3: 400" error_shape ERR_VERSION 400
req GET "$BE/ip_policy_rules/$EB"
check "... and none of them edited" replied 200 '"description":"lab"'

# ---- faults on edits: done then lost, or refused before anything ----
start pfaulty --faults 'patch_rule:drop@1,patch_rule:500@2,patch_cred:reset@1,patch_cred:502@2'
BP=$base
req POST "$BP/ip_policy_rules" "$(rule 10.0.0.0/8 $P1 allow)"
PR=$(field id)
req PATCH "$BP/ip_policy_rules/$PR" '{"description":"dropped"}'
check "patch_rule:drop: curl sees an empty reply (52)" crc_is 52
req PATCH "$BP/ip_policy_rules/$PR" '{"description":"refused"}'
check "patch_rule:500: refused" error_shape ERR_INTERNAL 500
req GET "$BP/ip_policy_rules/$PR"
check "the dropped edit was committed; the refused one was not" replied 200 '"description":"dropped"'
req POST "$BP/credentials" '{"description":"c"}'
PC=$(field id)
req PATCH "$BP/credentials/$PC" '{"metadata":"reset"}'
check "patch_cred:reset: curl sees a reset (56)" crc_is 56
req PATCH "$BP/credentials/$PC" '{"metadata":"bad gateway"}'
check "patch_cred:502: refused" error_shape ERR_BAD_GATEWAY 502
req GET "$BP/credentials/$PC"
check "the reset edit was committed; the 502 one was not" replied 200 '"metadata":"reset"'
check "edit faults are logged" grep -q "^PATCH /ip_policy_rules/$PR 200 .*fault=drop" "$tmp/pfaulty.log"
run serve-api --help
check "--help lists the edit operations for --faults" grep -q 'patch_rule patch_cred' "$tmp/out"
checks_done
