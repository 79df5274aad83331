#!/bin/sh
# Sync from the console against a real serve-api, through tmux at 80x24: records
# created in the console reach the server after 's'; the header reaches its synced
# state; the new credential's token shows once, its OSC 52 copy (wrapped for tmux)
# reaches the terminal, then it is masked; revealing it again asks first.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

db="$tmp/sync.db"
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
pane="$tmp/pane.out"

start_server sync || exit 1
run --db "$db" rules create --cidr 10.1.0.0/16 --policy "$policy" --action allow
check "seed rule" status_is 0

tui_console "$db"
check "console opens" tui_wait "10.1.0.0/16"
check "header: never synced" tui_wait "never synced"
tui_pipe "$pane"

# ---- create a rule and a credential in the console -------------------------------------
tui_keys c
tui_wait "Create rule" >/dev/null
tui_type "10.2.0.0/16"
tui_keys Tab Down Enter
check "rule queued" tui_wait "rule queued: allow 10.2.0.0/16"
tui_keys 2
tui_wait "[2 Creds]" >/dev/null
tui_keys c
tui_wait "Create credential" >/dev/null
tui_type "ci agent"
tui_keys Tab
tui_type "bind:ci.example.com"
tui_keys Enter Enter
check "credential queued" tui_wait "its token shows once"

# ---- sync -------------------------------------------------------------------------------
tui_keys s
check "the token dialog shows after the sync" tui_wait "New token: cr_" 20
# "synced 3s ago" (not "never synced": a number follows).
synced_shown() { tui_capture | grep -q "synced [0-9]"; }
check "header reaches synced" tui_poll 20 synced_shown
server_list ip_policy_rules cidr >"$tmp/out"
check "the rule is on the server" out_has "10.2.0.0/16"
server_list credentials description >"$tmp/out"
check "the credential is on the server" out_has "ci agent"

cred=$(tui_capture | sed -n 's/.*New token: \(cr_[0-9A-Za-z]*\).*/\1/p' | head -n 1)
run --db "$db" creds token "$cred"
token=$(cat "$tmp/out")
check "the cache holds the token" sh -c "[ -n '$token' ]"
check "the dialog shows that token" tui_has "$token"

# ---- copy through OSC 52 (plain for tmux, then wrapped for the outer terminal) ----------
tui_keys Y
check "copy acknowledged" tui_wait "OSC 52"
b64=$(printf '%s' "$token" | base64 | tr -d '\n')
osc_seen() { grep -a -F -q "52;c;$b64" "$pane"; }
check "the OSC 52 sequence reaches the terminal" tui_poll 10 osc_seen
check "wrapped for tmux" grep -a -F -q "Ptmux;" "$pane"

# ---- dismissed: masked, never shown again ---------------------------------------------------
tui_keys Enter
check "dismissed: the token is gone" tui_wait_gone "$token"
masked() { tui_has "****" || tui_has "••••"; }
check "dismissed: masked" masked
tui_keys s
check "second sync" tui_wait "sync: 0 created" 20
check "the token is not shown again" tui_lacks "New token"

# ---- reveal asks first -----------------------------------------------------------------------
tui_keys g t
check "reveal asks" tui_wait "Show the token of $cred?"
tui_keys Enter
check "No shows nothing" tui_wait "cancelled: nothing changed"
check "still hidden" tui_lacks "$token"
tui_keys t
tui_wait "Show the token of" >/dev/null
tui_keys y
check "Yes shows it" tui_wait "$token"
tui_keys Enter
tui_wait_gone "$token" >/dev/null

tui_pipe_stop
tui_keys Q
check "quits with status 0" tui_exited_ok

# ---- a slow server: the console stays responsive while it pushes ------------------------------
start_server slow --faults "create_rule:delay=3000@1+" || exit 1
for c in 10.3.0.0/16 10.4.0.0/16 10.5.0.0/16; do
    run --db "$db" rules create --cidr "$c" --policy "$policy" --action deny
done
tui_console "$db"
tui_wait "10.5.0.0/16" >/dev/null
tui_keys s
check "header shows the push's progress" tui_wait " of 3" 20
tui_keys 4
pushing_in_log_view() { tui_has "[4 Log]" && tui_has " of 3"; }
check "keys work while it pushes" tui_poll 10 pushing_in_log_view
check "the header gives an ETA once a row is done" tui_wait ", ETA " 20
check "then synced" tui_poll 40 synced_shown
server_list ip_policy_rules cidr >"$tmp/out"
check "the three rules reached the server" sh -c "grep -c '10\.[345]\.0\.0/16' '$tmp/out' | grep -qx 3"

# ---- the server answers 429 for good: the queue pauses, the run stops, the row kept ------------
# A budget window of 2 s and one window without progress: the run gives up in seconds.
start_server limited --faults "create_rule:429@1+:retry-after=1" || exit 1
run --db "$db" rules create --cidr 10.7.0.0/16 --policy "$policy" --action deny
RAMPART_WINDOW=2 RAMPART_GIVE_UP_WINDOWS=1
export RAMPART_WINDOW RAMPART_GIVE_UP_WINDOWS
tui_console "$db"
tui_wait "10.7.0.0/16" >/dev/null
tui_keys s
check "paused by a 429: the header names it with the wait" \
    tui_wait "rate limited (429), retry in" 20
check "the run stops: the header says why and when" tui_wait "rate limited (429) (" 40
check "not called anything else" tui_lacks "server error"
tui_keys G
check "the row stays queued" tui_wait "10.7.0.0/16 deny   new "
tui_keys 4
check "the log says why the sync stopped" tui_wait "sync stopped: rate limited (429)"
tui_keys Q
check "quits" tui_exited_ok
unset RAMPART_WINDOW RAMPART_GIVE_UP_WINDOWS
run --db "$db" rules list --json
check "the row waits for the next sync" out_has '"state":"new"'
tui_console "$db"
tui_wait "10.7.0.0/16" >/dev/null

# ---- the remote goes away: offline, retried later; quitting cancels the wait ---------------------
stop_server
tui_keys 1
run --db "$db" rules create --cidr 10.6.0.0/16 --policy "$policy" --action deny
tui_keys s
check "header says unreachable with the retry time" tui_wait "unreachable, retry in" 40
check "the reason is in the status line once the run gives up" tui_wait "could not be reached" 60
check "then the worker's own retry, named the same way" tui_wait "unreachable, retry in" 10
tui_keys Q
check "quitting during the retry wait" tui_exited_ok
checks_done
exit 0
