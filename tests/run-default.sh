#!/bin/sh
# `make run`: what a newcomer sees first, on a working default. With a remote
# configured (config file or RAMPART_API_URL/KEY) rampart uses it; otherwise it
# runs against its sandbox: a private reference server on a loopback port.
if "$BIN" status --json 2>/dev/null | grep -q '"remote_configured": true'; then
    exec "$BIN" "$@"
fi
exec "$BIN" --sandbox "$@"
