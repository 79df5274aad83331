#!/bin/sh
# A remote whose create reply holds a hostile token (ESC, OSC, CSI, BEL, a bidi
# override, a C1 CSI) or an over-long one: the token is not stored, the credential
# is marked with the reason, and nothing of it reaches the terminal raw
# (`creds create --sync`, `creds token`, `creds get`, `creds list`, the sync's own
# lines). A well-formed token from the same server is kept and printed (the check
# is not stricter than the API). The hostile server is a few lines of python3: it
# answers POST /credentials with the token chosen by its start argument.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1 || ! command -v sqlite3 >/dev/null 2>&1; then
    echo "not ok - python3 and sqlite3 are needed"
    exit 1
fi

cat >"$tmp/hostile.py" <<'PY'
import http.server, json, sys

MODE, READY = sys.argv[1], sys.argv[2]
BODY = "2HostileCred000000000000001"   # 27 base62 characters
TOKENS = {
    # ESC ] 0 ; title BEL, ESC [ 2 J, U+202E, U+009B (C1 CSI) 31m, a lone ESC
    "escape": BODY + "_\u001b]0;pwned\u0007\u001b[2J\u202eevil\u009b31m\u001b",
    "long": BODY + "_" + "A" * 300,
    "good": BODY + "_" + "Ab3" * 7,
}

OBJ = {}

class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(n) or b"{}")

    def do_POST(self):
        req = self.body()
        base = "http://%s:%d" % self.server.server_address
        OBJ.clear()
        OBJ.update({
            "id": "cr_" + BODY, "uri": base + "/credentials/cr_" + BODY,
            "created_at": "2025-09-04T10:11:15Z",
            "description": req.get("description", ""), "metadata": req.get("metadata", ""),
            "acl": req.get("acl", []), "owner_id": "usr_2VhYfCwqPkX0n4sF5nYfW3eJb1a"})
        self.reply(201, dict(OBJ, token=TOKENS[MODE]))

    # The edit that takes the creation marker out of the metadata, and its check.
    def do_PATCH(self):
        OBJ.update(self.body())
        self.reply(200, dict(OBJ, token=None))

    def do_GET(self):
        if self.path.startswith("/credentials/"):
            self.reply(200, dict(OBJ, token=None))
            return
        base = "http://%s:%d" % self.server.server_address
        self.reply(200, {"credentials": [dict(OBJ, token=None)] if OBJ else [],
                         "uri": base + "/credentials", "next_page_uri": None})

    def do_DELETE(self):
        OBJ.clear()
        self.send_response(204)
        self.end_headers()

s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(READY + ".tmp", "w") as f:
    f.write("%d" % s.server_address[1])
import os
os.rename(READY + ".tmp", READY)
s.serve_forever()
PY

hostile_pid=""
stop_hostile() {
    [ -n "$hostile_pid" ] && kill "$hostile_pid" 2>/dev/null && wait "$hostile_pid" 2>/dev/null
    hostile_pid=""
}
trap 'stop_hostile; rm -rf "$tmp"' EXIT INT TERM

# start_hostile MODE: the server answering creates with that token.
start_hostile() {
    stop_hostile
    rm -f "$tmp/ready"
    python3 "$tmp/hostile.py" "$1" "$tmp/ready" &
    hostile_pid=$!
    n=0
    while [ ! -s "$tmp/ready" ] && [ $n -lt 200 ]; do
        sleep 0.05 # polling for the ready file
        n=$((n + 1))
    done
    export RAMPART_API_URL="http://127.0.0.1:$(cat "$tmp/ready")" RAMPART_API_KEY=sk_hostile \
        RAMPART_RATE=0
}

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
cp "$tmp/out" "$tmp/create.out"
cp "$tmp/err" "$tmp/create.err"
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

exit $status
