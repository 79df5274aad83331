#!/usr/bin/env python3
"""A remote whose create replies hold a chosen token, for the tests of what a client
does with a hostile one (tests/e2e/hostile_token.sh, tests/tui/tmux_escape.sh).

usage: hostile_server.py MODE READY_FILE
  MODE: escape (ESC, OSC, BEL, CSI, U+202E, a C1 CSI in the token), long (300
  bytes), good (a well-formed token). Listens on 127.0.0.1, a free port, written to
  READY_FILE once it accepts. One credential at a time: POST makes it, PATCH and
  GET read or change it (the creation marker's edit), DELETE drops it.
"""
import http.server, json, os, sys

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
os.rename(READY + ".tmp", READY)
s.serve_forever()
