#!/bin/sh
# Profiles in the console, through tmux at 80x24: the header names the profile,
# in the profile's profile_color (the terminal's colour escapes, read with
# capture-pane -e);
# `:profile NAME` closes this cache and opens the other profile's (its config read
# again, its key_command run with the terminal given back, its remote); refused
# while a sync runs, for an unknown name, and when the key_command fails (the
# console stays, whole, on its profile).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"
unset RAMPART_PROFILE RAMPART_KEY_COMMAND

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
# The first listing of rules is slow: a sync that is still running when asked to switch.
start_server prof --faults list_rules:delay=1500@1 || exit 1
unset RAMPART_API_URL RAMPART_API_KEY # the profile's section gives them
printf '%s\n' "$SERVER_KEY" >"$tmp/key"
mkdir -p "$XDG_CONFIG_HOME/rampart"
cat >"$XDG_CONFIG_HOME/rampart/config" <<CFG
[profile.stage]
api_url = $server_url
key_command = cat $tmp/key
profile_color = magenta

[profile.broken]
api_url = $server_url
key_command = sh -c 'exit 4'
CFG

run rules create --cidr 10.1.0.0/16 --policy $policy --action allow
run --profile stage rules create --cidr 10.2.0.0/16 --policy $policy --action deny

rm -f "$tmp/exit"
tui_start 80x24 xterm-256color "$RAMPART tui --no-agent; echo \$? >'$tmp/exit'"
check "the header names the profile" tui_wait "rampart (default)"
check "the default profile's cache" tui_wait "10.1.0.0/16"

tui_keys :
tui_type "profile stage"
tui_keys Enter
check ":profile: the header follows" tui_wait "rampart (stage)"
check ":profile: the other cache" tui_wait "10.2.0.0/16"
check ":profile: the first cache is gone" tui_wait_gone "10.1.0.0/16"
check ":profile: says where it went" tui_wait "profile stage: cache"
# The header's first row with its colour escapes (SGR 35: magenta).
colored() { tui_tmux capture-pane -e -p -t "$tui_session" | head -n 1 | grep -q "$1"; }
check ":profile: the name in the profile's colour" colored "$(printf '\033')\[35mstage"

tui_keys s
tui_keys :
tui_type "profile default"
tui_keys Enter
check "refused while a sync runs" tui_wait "a sync is running"
check "the sync ends, with the key_command's key" tui_wait "synced 0s ago" 20
check "... and the rule reached the remote" [ "$(server_count ip_policy_rules)" = 1 ]

tui_keys :
tui_type "profile nope"
tui_keys Enter
check "an unknown profile: named, with the profiles there are" \
    tui_wait "unknown profile 'nope'"
tui_keys :
tui_type "profile broken"
tui_keys Enter
check "a failing key_command: the profile" tui_wait "profile broken: key_command"
check "... and that it gave no key" tui_wait "gave no API key: exit"
check "... and the console stays on its profile" tui_wait "rampart (stage)"
check "... its screen whole again" tui_wait "10.2.0.0/16"

tui_keys :
tui_type "profile default"
tui_keys Enter
check "back to the default profile" tui_wait "rampart (default)"
check "... and its cache" tui_wait "10.1.0.0/16"
tui_keys Q
check "quits" tui_exited_ok
checks_done
exit 0
