#!/bin/sh
# `make run`: what a newcomer sees first, on a working default: the console
# (`rampart` with no command opens it on a terminal; elsewhere it prints the
# status and the overview). With a remote configured (config file or
# RAMPART_API_URL/KEY) rampart uses it; otherwise it runs against its sandbox: a
# private reference server on a loopback port, with its own cache.
if "$BIN" status --json 2>/dev/null | grep -q '"remote_configured": true'; then
    exec "$BIN" "$@"
fi
exec "$BIN" --sandbox "$@"
