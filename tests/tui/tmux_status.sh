#!/bin/sh
# The console's sync status through tmux at 80x24 against a real serve-api with
# --faults: the header names each cause ("rate limited (429), retry in 5s" counting
# down live, "server error 500, retry in …"), never one label for all; the log
# view has the 500's message and operation id; "synced Ns ago" ticks with no key
# pressed; a restart reads the cache's last sync instead of "never synced".
# Every wait polls the screen (tui_wait); nothing sleeps for a guessed time.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
queue_rule() { run --db "$1" rules create --cidr "$2" --policy "$policy" --action deny; }

# ---- 429: named, with a live countdown ------------------------------------------------------
db="$tmp/rl.db"
start_server rl --faults "create_rule:429@1:retry-after=5" || exit 1
queue_rule "$db" 10.1.0.0/16
tui_console "$db"
tui_wait "10.1.0.0/16" >/dev/null
check "before: never synced" tui_wait "never synced"
tui_keys s
check "429: the header names it" tui_wait "rate limited (429), retry in" 20
check "429: counts down (4s)" tui_wait "rate limited (429), retry in 4s" 10
check "429: counts down (2s)" tui_wait "rate limited (429), retry in 2s" 10
check "429: not a server error" tui_lacks "server error"
check "429: then synced" tui_wait "synced 0s ago" 20
check "the age ticks with no key pressed" tui_wait "synced 2s ago" 10
tui_keys 4
check "429: the log names the wait" tui_wait "waiting: rate limited (429)"
tui_keys Q
check "quits" tui_exited_ok

# ---- a restart: the age from the cache, not "never synced" -----------------------------------
tui_console "$db"
tui_wait "10.1.0.0/16" >/dev/null
aged() { tui_capture | head -n 1 | grep -q "synced [0-9][0-9]*[smh] ago"; }
check "restart: the header reads the stored last sync" tui_poll 10 aged
check "restart: not never synced" tui_lacks "never synced"
tui_keys Q
check "quits again" tui_exited_ok

# ---- 500: named with its status; the message and operation id in the log ---------------------
db="$tmp/se.db"
start_server se --faults "create_rule:500@1-2" || exit 1
queue_rule "$db" 10.2.0.0/16
tui_console "$db"
tui_wait "10.2.0.0/16" >/dev/null
tui_keys s
check "500: the header names it" tui_wait "server error 500, retry in" 20
check "500: not a rate limit" tui_lacks "rate limited"
check "500: then synced" tui_wait "synced " 30
tui_keys 4
check "500: the log has its message" \
    tui_wait "waiting: server error 500: internal error"
tui_keys /
tui_type "waiting"
tui_keys Enter Enter
check "500: the details give the operation id" tui_wait "operation    op_"
check "500: and the status" tui_wait "http status  500"
tui_keys Escape Q
check "quits after 500" tui_exited_ok
checks_done
exit 0
