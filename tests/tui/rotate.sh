#!/bin/sh
# The console shows a credential's rotation in its details: the old credential
# names its successor, the grace left and when its token was last served; the
# successor names its predecessor. 'T' starts a rotation. A real serve-api, a
# headless console.
here=$(dirname "$0")
. "$here/../e2e/lib.sh"
. "$here/../e2e/server.sh"
. "$here/lib.sh"

DB="$tmp/cache.db"
export RAMPART_DB="$DB"
start_server rotate || exit 1
id_of() { sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out"; }
run creds create --description web --sync
OLD=$(id_of)
run creds create --description api --sync
API=$(id_of)
run creds rotate web --grace 2d --sync --json
NEW=$(sed -n 's/.*"new_id": "\([^"]*\)".*/\1/p' "$tmp/out" | head -n 1)
stop_server
check "setup: a rotation in its grace period" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$OLD" "$NEW"

# The successor's token, brought by a sync, shows once first: Esc closes it.
headless_play "$DB" details <<EOF2
key <Esc>
key 2
key /
type $OLD
key <Enter>
key <Enter>
dump
key <Esc>
key <Esc>
key /
type $NEW
key <Enter>
key <Enter>
dump
key <Esc>
EOF2
check "console: exit 0" status_is 0
# 48 hours of grace, less the seconds since the token was held: 2d, or 1d once
# a second has passed (ages are whole units rounded down).
check "the old credential's details: its successor and the grace left" \
    grep -Eq "to $NEW: grace (2d|1d) left" "$tmp/screen.1"
check "the old credential's details: when its token was last served here" \
    screen 1 "old served   never"
check "the successor's details: its predecessor" screen 2 "from $OLD: grace"

# 'T' on a credential queues its successor (the grace period of the settings).
RAMPART_ROTATE_GRACE=3h headless_play "$DB" rotate <<EOF2
key <Esc>
key 2
key /
type $API
key <Enter>
key T
dump
key T
dump
EOF2
check "T: the status line says what follows" screen 1 "rotating $API to local_"
check "T: the grace period from the settings" screen 1 "retires 3h"
check "T again: refused, it is being rotated" screen 2 "not rotated: credential $API is already being"
run creds get "$API"
check "T: the rotation is in the cache" out_has "^successor  *local_"
checks_done
