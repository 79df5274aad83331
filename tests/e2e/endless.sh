#!/bin/sh
# A remote (or a hub) that serves 5,000-item pages with a fresh next_page_uri
# forever: a pull's memory stays bounded (the staging spills to disk past its
# cache), and the listing_max setting stops it with a failure that names the
# setting; nothing is marked deleted, the cache is as it was.
. "$(dirname "$0")/lib.sh"

cat >"$tmp/endless.py" <<'EOF'
import http.server, json, sys, os
READY = sys.argv[1]
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
def rid(n):  # ids that sort newest first: count down from the largest
    n = 62 ** 27 - 1 - n
    s = ""
    for _ in range(27):
        s = BASE62[n % 62] + s
        n //= 62
    return "ipr_" + s
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        base = "http://%s:%d" % self.server.server_address
        if self.path.startswith("/credentials"):
            body = {"credentials": [], "uri": base + "/credentials", "next_page_uri": None}
        else:
            start = 0
            if "page=" in self.path:
                start = int(self.path.split("page=")[1].split("&")[0])
            items = [{"id": rid(i), "uri": base + "/ip_policy_rules/" + rid(i),
                      "created_at": "2026-01-01T00:00:00Z",
                      "cidr": "10.%d.%d.%d/32" % ((i >> 16) & 255, (i >> 8) & 255, i & 255),
                      "ip_policy": {"id": "ipp_endless", "uri": base + "/ip_policies/x"},
                      "action": "allow"} for i in range(start, start + 5000)]
            body = {"ip_policy_rules": items, "uri": base + "/ip_policy_rules",
                    "next_page_uri": base + "/ip_policy_rules?page=%d&limit=5000" % (start + 5000)}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(READY + ".tmp", "w").write(str(s.server_address[1]))
os.rename(READY + ".tmp", READY)
s.serve_forever()
EOF
python3 "$tmp/endless.py" "$tmp/ready" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
n=0
while [ ! -s "$tmp/ready" ] && [ $n -lt 250 ]; do
    n=$((n + 1))
    sleep 0.02 # polling for the ready file
done
export RAMPART_API_URL="http://127.0.0.1:$(cat "$tmp/ready")" RAMPART_API_KEY=k RAMPART_RATE=0

# The cap, low: the pull stops with a failure that names it.
RAMPART_LISTING_MAX=20000 run --db "$tmp/c.db" sync --pull-only
check "an endless listing: stopped at listing_max, exit 4" \
    sh -c '[ "$0" -eq 4 ] && grep -q "holds more than 20000 objects (the listing_max setting)" "$1"' \
    "$status" "$tmp/err"
run --db "$tmp/c.db" rules list
check "... nothing staged reached the cache" err_has "no rules in the cache"

# Memory: 12 s of pulling (hundreds of thousands of rules) stays bounded.
maxrss="$(dirname "$RAMPART")/tools/maxrss"
if [ -x "$maxrss" ] && ! ldd "$RAMPART" 2>/dev/null | grep -q libasan; then
    "$maxrss" "$tmp/rss" timeout -s INT 12 "$RAMPART" --db "$tmp/d.db" sync --pull-only \
        >"$tmp/out" 2>"$tmp/err"
    rss=$(cat "$tmp/rss")
    check "an endless listing pulled for 12 s: peak RSS under 128 MiB ($rss KiB)" \
        [ "$rss" -lt 131072 ]
else
    skip "an endless listing pulled for 12 s: peak RSS" "maxrss missing or a sanitizer build"
fi
checks_done
exit 0
