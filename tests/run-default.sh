#!/bin/sh
# `make run`: what a newcomer sees first. Until the console exists this is the
# status of the local cache and the command overview.
exec "$BIN" "$@"
