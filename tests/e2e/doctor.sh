#!/bin/sh
# `rampart doctor` and the cache's identity: one line per check and --json, the
# exit status; another program's SQLite file refused by reads and writes and left
# as it was; an older cache adopted; a damaged cache named by a read and by doctor;
# the remote check (ok, a refused key, unreachable; never the key); a database
# error of a sync said once ("database: ", not "database: database: ").
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
unset XDG_RUNTIME_DIR # the default socket directory: /tmp/rampart-UID
P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
DB="$tmp/cache.db"
line_is() { grep -q "^$1  *$2  " "$tmp/out"; } # line_is STATUS CHECK

# ---- a fresh machine: nothing to check yet, nothing created -------------------------
run --db "$DB" doctor
check "fresh: exit 1, the cache that is not there named" \
    sh -c '[ "$0" -eq 1 ] && grep -q "^FAIL  cache file .*does not exist: no cache there" "$1"' \
    "$status" "$tmp/out"
check "fresh: one line per check (11)" out_lines 11
check "fresh: no cache yet, skipped" line_is skip "cache identity"
check "fresh: no remote configured, skipped" \
    grep -q "^skip  remote  .*skipped: no remote configured" "$tmp/out"
check "fresh: doctor created no cache" [ ! -e "$DB" ]

# ---- a cache of ours ------------------------------------------------------------------
run --db "$DB" rules create --cidr 10.0.0.0/8 --policy $P --action allow
run --db "$DB" doctor
check "a cache: exit 0" status_is 0
check "a cache: its file ok (0600)" grep -q "^ok  *cache file  *.*(mode 0600" "$tmp/out"
check "a cache: application_id 0x52414D50 and the schema version" \
    grep -q "^ok    cache identity  .*application_id 0x52414D50), schema version [0-9]" "$tmp/out"
check "a cache: integrity_check ok" line_is ok "cache integrity"
check "the application id is in the file" \
    [ "$(sqlite3 "$DB" 'PRAGMA application_id')" = 1380011344 ]
run --db "$DB" doctor --json
check "--json: an array of {check, status, detail}, one per check" sh -c \
    '[ -s "$0" ] && jq -e "length == 11 and all(.[]; (keys == [\"check\", \"detail\", \"status\"]) and
            (.status | IN(\"ok\", \"fail\", \"skip\")))" "$0" >/dev/null' "$tmp/out"

# ---- permissions: the same sentence as every command --------------------------------
chmod 644 "$DB"
run --db "$DB" doctor
check "cache 0644: exit 1" status_is 1
check "cache 0644: FAIL with the chmod to run" \
    grep -q "^FAIL  cache file  .*is readable by others (mode 0644): run 'chmod 600 $DB'" \
    "$tmp/out"
check "cache 0644: not opened, so identity skipped" line_is skip "cache identity"
run --db "$DB" doctor --json
check "cache 0644, --json: status fail" sh -c \
    '[ -s "$0" ] && jq -e ".[] | select(.check == \"cache file\") | .status == \"fail\"" "$0" >/dev/null' \
    "$tmp/out"
chmod 600 "$DB"

# ---- another program's SQLite file: refused, untouched --------------------------------
F="$tmp/notes.db"
sqlite3 "$F" "PRAGMA application_id = 252006673; CREATE TABLE notes (body TEXT);
              INSERT INTO notes VALUES ('keep me')"
chmod 600 "$F"
cp "$F" "$tmp/notes.orig"
run --db "$F" rules list
check "foreign file, a read (rules list): refused, exit 2" \
    refused 2 "$F is not a rampart cache (application_id 0x0F055111"
run --db "$F" status
check "foreign file, status: refused" refused 2 "is not a rampart cache"
run --db "$F" rules create --cidr 10.0.0.0/8 --policy $P --action allow
check "foreign file, a write (rules create): refused" refused 2 "is not a rampart cache"
check "foreign file: byte for byte as it was, no -wal" \
    sh -c 'cmp -s "$0" "$1" && [ ! -e "$0-wal" ]' "$F" "$tmp/notes.orig"
check "foreign file: still in rollback-journal mode, user_version 0" \
    sh -c '[ "$(sqlite3 "$0" "PRAGMA journal_mode; PRAGMA user_version" | tr "\n" " ")" = "delete 0 " ]' \
    "$F"
run --db "$F" doctor
check "foreign file, doctor: identity FAIL, exit 1" \
    sh -c 'grep -q "^FAIL  cache identity  .*is not a rampart cache" "$0" && [ "$1" = 1 ]' \
    "$tmp/out" "$status"
G="$tmp/plain.db"
sqlite3 "$G" "CREATE TABLE rules (x); INSERT INTO rules VALUES (1)"
chmod 600 "$G"
run --db "$G" rules list
check "a SQLite file with no application id but tables: refused" \
    refused 2 "not a rampart cache (application_id 0x00000000"

# ---- an older rampart's cache (application id 0): read, then adopted ----------------
OLD="$tmp/old.db"
run --db "$OLD" rules create --cidr 10.1.0.0/16 --policy $P --action deny
sqlite3 "$OLD" "PRAGMA application_id = 0"
run --db "$OLD" doctor
check "older cache: doctor says made by an older rampart, exit 0" \
    sh -c 'grep -q "^ok  *cache identity  *made by an older rampart" "$0" && [ "$1" = 0 ]' \
    "$tmp/out" "$status"
run --db "$OLD" rules list
check "older cache: listed" out_has "10.1.0.0/16"
check "older cache: now stamped" [ "$(sqlite3 "$OLD" 'PRAGMA application_id')" = 1380011344 ]

# ---- a damaged cache: a read names it; doctor's integrity check finds it --------------
BAD="$tmp/bad.db"
i=0
while [ $i -lt 150 ]; do
    printf '{"cidr":"10.%d.%d.0/24","ip_policy_id":"%s","action":"allow"}\n' \
        $((i / 256)) $((i % 256)) $P
    i=$((i + 1))
done | sed '1s/^/[/; $!s/$/,/; $s/$/]/' >"$tmp/rules.json"
run --db "$BAD" rules import "$tmp/rules.json"
check "setup: 150 rules imported" status_is 0
page=$(sqlite3 "$BAD" 'PRAGMA page_size')
size=$(stat -c %s "$BAD")
# Every page after the first two: the header and schema still read, the rows do not.
head -c $((size - 2 * page)) /dev/zero | tr '\0' 'Z' |
    dd of="$BAD" bs="$page" seek=2 conv=notrunc 2>/dev/null
run --db "$BAD" rules list
check "damaged cache, rules list: non-zero, names the file" \
    sh -c '[ "$0" != 0 ] && grep -q "$1 is damaged" "$2"' "$status" "$BAD" "$tmp/err"
run --db "$BAD" doctor
check "damaged cache, doctor: integrity or identity FAIL, exit 1" sh -c \
    'grep -q "^FAIL  cache i" "$0" && [ "$1" = 1 ]' "$tmp/out" "$status"
printf 'not a database at all, just some text that is long enough\n' >"$tmp/text.db"
chmod 600 "$tmp/text.db"
run --db "$tmp/text.db" creds list
check "a text file as the cache: exit 1, named" refused 1 "$tmp/text.db is damaged or is not a SQLite database"

# ---- the remote: one listing page with the configured URL and key --------------------
start_server doctor || exit 1
run --db "$DB" doctor
check "remote reachable: ok" grep -q "^ok    remote  .*answered a listing of rules (HTTP 200)" "$tmp/out"
check "remote reachable: exit 0" status_is 0
WRONG=sk_wrong_$$_not_printed
RAMPART_API_KEY=$WRONG run --db "$DB" doctor
check "remote, wrong key: FAIL says the key was refused, exit 1" sh -c \
    'grep -q "^FAIL  remote  .*the API key was refused" "$0" && [ "$1" = 1 ]' "$tmp/out" "$status"
check "remote, wrong key: the key is printed nowhere" \
    sh -c '! grep -q "$0" "$1" "$2"' "$WRONG" "$tmp/out" "$tmp/err"
run --db "$DB" doctor --json
check "remote: the real key is printed nowhere either" \
    sh -c '! grep -q "$0" "$1" "$2"' "$SERVER_KEY" "$tmp/out" "$tmp/err"
RAMPART_API_URL=http://127.0.0.1:9 run --db "$DB" doctor
check "remote unreachable: FAIL, check api_url" grep -q "^FAIL  remote  .*check api_url" "$tmp/out"

# ---- a database error of a sync says "database: " once ------------------------------
SY="$tmp/sync.db"
run --db "$SY" rules create --cidr 10.9.0.0/16 --policy $P --action allow
sqlite3 "$SY" "CREATE TRIGGER refuse BEFORE UPDATE ON rules
               BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
run --db "$SY" sync
check "sync meets a database error: exit 4, the message once prefixed" \
    refused 4 "database: injected failure"
check "... never 'database: database:'" err_lacks "database: database:"
run --db "$SY" sync --json
check "... nor in the --json report" \
    sh -c 'grep -q "\"error\": \"database: injected failure\"" "$0" &&
           ! grep -q "database: database:" "$0"' "$tmp/out"
stop_server
checks_done
