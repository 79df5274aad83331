#!/bin/sh
# A remote whose create reply holds a hostile token (ESC, OSC, CSI, BEL, a bidi
# override, a C1 CSI) or an over-long one: the token is not stored, the credential
# is marked with the reason, and nothing of it reaches the terminal raw
# (`creds create --sync`, `creds token`, `creds get`, `creds list`, the sync's own
# lines). A well-formed token from the same server is kept and printed (the check
# is not stricter than the API). The hostile server is hostile_server.py: it
# answers POST /credentials with the token chosen by its start argument.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
trap 'stop_hostile; rm -rf "$tmp"' EXIT INT TERM

if ! command -v python3 >/dev/null 2>&1 || ! command -v sqlite3 >/dev/null 2>&1; then
    fail "python3 and sqlite3 are needed"
    exit 1
fi

id=cr_2HostileCred000000000000001
esc=$(printf '\033')
# no_raw FILE...: no ESC, BEL, U+202E or C1 CSI byte sequence in any of them.
no_raw() {
    for f in "$@"; do
        if grep -q "$esc" "$f" || grep -q "$(printf '\007')" "$f" ||
            grep -q "$(printf '\342\200\256')" "$f" || grep -q "$(printf '\302\233')" "$f"; then
            return 1
        fi
    done
}
tokens_held() { sqlite3 "$1" "SELECT count(*) FROM tokens"; }
cache_lacks_pwned() { ! sqlite3 "$1" .dump | grep -q pwned; }

# ---- escape sequences in the token ------------------------------------------------------
db="$tmp/escape.db"
start_hostile escape
run --db "$db" creds create --description "via hostile" --sync
check "create --sync: no ESC/BEL/bidi/C1 on stdout or stderr" no_raw "$tmp/out" "$tmp/err"
check "create --sync: the reason is said" \
    grep -q "malformed token (not stored)" "$tmp/out" "$tmp/err"
check "create --sync: the token is not in the cache" [ "$(tokens_held "$db")" = 0 ]
check "create --sync: no byte of it anywhere in the cache" cache_lacks_pwned "$db"

run --db "$db" creds token "$id"
check "creds token: exit 3" status_is 3
check "creds token: says the token was malformed" err_has "malformed token (not stored)"
check "creds token: nothing raw" no_raw "$tmp/out" "$tmp/err"
check "creds token: prints no token" [ ! -s "$tmp/out" ]

run --db "$db" creds get "$id"
check "get: the credential carries the reason" out_has "^error .*malformed token (not stored)"
check "get: nothing raw" no_raw "$tmp/out" "$tmp/err"
run --db "$db" creds list
check "list: nothing raw" no_raw "$tmp/out" "$tmp/err"
run --db "$db" creds get "$id" --json
check "get --json: token null" out_has '"token": null'
check "get --json: the reason in its error" out_has '"error": "the remote.s create reply held a malformed token'

# ---- too long ---------------------------------------------------------------------------
db="$tmp/long.db"
start_hostile long
run --db "$db" creds create --description "long token" --sync
check "over-long token: not stored" [ "$(tokens_held "$db")" = 0 ]
run --db "$db" creds token "$id"
check "over-long token: creds token exit 3 with the reason" refused 3 "malformed token"
check "over-long token: the message holds no byte of it" err_lacks "AAAAAAAAAA"

# ---- a well-formed token is kept --------------------------------------------------------
db="$tmp/good.db"
start_hostile good
run --db "$db" creds create --description "good token" --sync
check "good token: create --sync prints it" out_has "^token: 2HostileCred000000000000001_Ab3Ab3"
check "good token: stored" [ "$(tokens_held "$db")" = 1 ]
run --db "$db" creds token "$id"
check "good token: creds token prints it" out_has "^2HostileCred000000000000001_Ab3Ab3Ab3Ab3Ab3Ab3Ab3$"

checks_done
exit 0
