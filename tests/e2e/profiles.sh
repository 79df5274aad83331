#!/bin/sh
# Profiles: two accounts in one config file, each against its own `rampart serve-api`
# with its own key; each sync sends to its own remote and fills its own cache.
# --profile over RAMPART_PROFILE; key_command (run only when a key is needed; a
# failure names the profile and the status, never the output); a 644 file holding
# api_key in any section refused with the chmod that fixes it; `rampart profiles`
# and --json; each profile's agent on a default socket of its own (both at once); the
# keys never in any output nor in a process's argv.
. "$(dirname "$0")/lib.sh"
unset RAMPART_PROFILE RAMPART_KEY_COMMAND

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
key_a=sk_prof_a_$$_$(date +%s)
key_b=sk_prof_b_$$_$(date +%s)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"' \
    EXIT INT TERM

# serve NAME KEY [serve-api options]: a server with its own database; its URL in
# $url_NAME.
serve() {
    name=$1 key=$2
    shift 2
    RAMPART_SERVE_API_KEY=$key "$RAMPART" serve-api --listen tcp:127.0.0.1:0 \
        --db "$tmp/$name.server.db" --ready-file "$tmp/$name.ready" "$@" \
        2>>"$tmp/$name.server.log" &
    pids="$pids $!"
    n=0
    while [ ! -s "$tmp/$name.ready" ]; do
        n=$((n + 1))
        [ $n -gt 500 ] && { fail "serve-api $name did not start"; exit 1; }
        sleep 0.02 # polling for the ready file
    done
    eval "url_$name=http://\$(cat \"\$tmp/\$name.ready\")"
}

# count URL KEY: rules the server at URL holds (its own key: the witness).
count() {
    curl -sS -H "Authorization: Bearer $2" -H "Service-Version: 2" \
        "$1/ip_policy_rules?limit=100" | grep -o '"cidr":"[^"]*"' | sort | tr '\n' ' '
}

# Everything rampart printed, kept to look for the keys at the end.
all="$tmp/all-output"
: >"$all"
prun() {
    run "$@"
    cat "$tmp/out" "$tmp/err" >>"$all"
}

serve a "$key_a"
serve b "$key_b" --faults list_rules:delay=1500@2+
printf '%s\n' "$key_b" >"$tmp/key-b"
chmod 600 "$tmp/key-b"
cfg="$XDG_CONFIG_HOME/rampart/config"
mkdir -p "$XDG_CONFIG_HOME/rampart"
cat >"$cfg" <<CFG
# the default profile: server a, its key in this file
api_url = $url_a
api_key = $key_a
rate = 0

[profile.staging]
api_url = $url_b
key_command = sh -c 'touch "$tmp/ran"; cat "$tmp/key-b"'

[profile.broken]
api_url = $url_b
key_command = sh -c 'printf sk_not; echo _a_key; exit 3'

[profile.empty]
api_url = $url_b
key_command = true

[profile.idle]
rate = 1

[profile.borrows]
api_url = $url_b
CFG
chmod 600 "$cfg"

# ---- two accounts, two remotes, two caches -------------------------------------------------
prun rules create --cidr 10.1.0.0/16 --policy $policy --action allow --description in-a
prun --profile staging rules create --cidr 10.2.0.0/16 --policy $policy --action deny \
    --description in-b
check "key_command not run to queue a change" test ! -e "$tmp/ran"
prun --profile staging rules list
check "staging's cache has its own rule" out_has "10.2.0.0/16"
check "... and not the default's" out_lacks "10.1.0.0/16"
check "key_command not run to list the cache" test ! -e "$tmp/ran"
prun sync
check "default: sync to server a" status_is 0
prun --profile staging sync
check "staging: sync to server b with the key_command's key" status_is 0
check "key_command ran for the sync" test -e "$tmp/ran"
check "server a holds the default's rule only" [ "$(count "$url_a" "$key_a")" = '"cidr":"10.1.0.0/16" ' ]
check "server b holds staging's rule only" [ "$(count "$url_b" "$key_b")" = '"cidr":"10.2.0.0/16" ' ]
check "each cache file where its profile says" \
    test -s "$XDG_DATA_HOME/rampart/rampart.db" -a -s "$XDG_DATA_HOME/rampart/rampart-staging.db"
prun rules list
check "the default cache: its rule, synced" out_has "synced.*10.1.0.0/16"
check "... and not staging's" out_lacks "10.2.0.0/16"

# ---- a profile with its own remote gets only its own key --------------------------------------
before_b=$(wc -l <"$tmp/b.server.log" 2>/dev/null || echo 0)
prun --profile borrows sync
check "a profile with only api_url: the top level's key is not sent to its remote" \
    refused 2 "profile borrows sets its own api_url but no key"
check "... server b saw no request from it" [ "$(wc -l <"$tmp/b.server.log" 2>/dev/null || echo 0)" = "$before_b" ]
prun profiles
check "profiles: where each key comes from" \
    sh -c 'grep -q "^  *borrows .*none (its own api_url" "$0" && grep -q "api_key (top level)" "$0" &&
           grep -q "key_command (profile)" "$0"' "$tmp/out"

# ---- a key_command has a deadline ---------------------------------------------------------
# (an outer `timeout` that had to kill a run exits 124)
cat >"$tmp/keycmd.conf" <<CFG
rate = 0
[profile.hangs]
api_url = $url_b
key_command = sleep 1000
key_command_timeout = 1

[profile.lingers]
api_url = $url_b
key_command = sh -c 'cat "$tmp/key-b"; sleep 30 &'
CFG
chmod 600 "$tmp/keycmd.conf"
export RAMPART_CONFIG="$tmp/keycmd.conf"
timeout 20 "$RAMPART" --profile hangs sync --timeout 3 >"$tmp/out" 2>"$tmp/err"
status=$?
check "a key_command that hangs: the sync ends by itself" sh -c '[ "$0" -ne 124 ] && [ "$0" -ne 137 ]' "$status"
check "... exit 2, naming the deadline and its setting" \
    refused 2 "did not finish within 1 s (the key_command_timeout setting)"
timeout 30 "$RAMPART" --profile hangs doctor >"$tmp/out" 2>"$tmp/err"
status=$?
check "... and doctor ends too" sh -c '[ "$0" -ne 124 ] && [ "$0" -ne 137 ]' "$status"
timeout 10 "$RAMPART" --profile lingers sync >"$tmp/out" 2>"$tmp/err"
status=$?
check "a key_command that leaves a child holding its output: not waited for" \
    sh -c '[ "$0" -eq 0 ]' "$status"
unset RAMPART_CONFIG

# ---- each profile's agent on a default socket of its own: both at once -----------------------
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
agent_pids=""
# agent_up NAME [--profile P]: `rampart agent` on its default socket, until it is ready.
agent_up() {
    name=$1
    shift
    "$RAMPART" "$@" agent --ready-file "$tmp/$name.agent" 2>"$tmp/$name.agent.log" &
    agent_pids="$agent_pids $!"
    pids="$pids $!"
    n=0
    while [ ! -s "$tmp/$name.agent" ] && kill -0 $! 2>/dev/null && [ $n -lt 200 ]; do
        n=$((n + 1))
        sleep 0.05 # polling for the ready file
    done
}
agent_up default
agent_up staging --profile staging
check "the default profile's agent: agent.sock" \
    grep -qx "unix:$XDG_RUNTIME_DIR/rampart/agent.sock" "$tmp/default.agent"
check "staging's agent beside it, on agent-staging.sock" \
    grep -qx "unix:$XDG_RUNTIME_DIR/rampart/agent-staging.sock" "$tmp/staging.agent"
curl -sS --max-time 10 --unix-socket "$XDG_RUNTIME_DIR/rampart/agent-staging.sock" \
    http://localhost/ip_policy_rules >"$tmp/staging.rules" 2>&1
check "... serving staging's cache" grep -q "10.2.0.0/16" "$tmp/staging.rules"
check "... not the default's" sh -c "! grep -q '10.1.0.0/16' '$tmp/staging.rules'"
prun --profile staging agent --help
check "agent --help names the profile's socket" out_has "agent-staging.sock"
for p in $agent_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
unset XDG_RUNTIME_DIR

# ---- which profile: --profile over RAMPART_PROFILE, the environment over a section ----------
RAMPART_PROFILE=staging prun status
check "RAMPART_PROFILE selects" out_has "^profile  *staging"
check "... with its cache" out_has "rampart-staging.db"
RAMPART_PROFILE=staging prun --profile default status
check "--profile over RAMPART_PROFILE" out_has "^profile  *default"
RAMPART_API_URL=http://127.0.0.1:9 prun --profile staging status
check "the environment over the profile's section" out_has "remote  *http://127.0.0.1:9"
prun --profile prod status
check "unknown profile: exit 2 listing the profiles" \
    refused 2 "unknown profile 'prod' (profiles in .*: default, staging, broken, empty, idle, borrows)"
RAMPART_PROFILE=prod prun rules list
check "unknown RAMPART_PROFILE: says where the name came from" \
    refused 2 "RAMPART_PROFILE: unknown profile 'prod'"
prun --profile 'a/../b' status
check "a malformed name: refused" refused 2 "is not a profile name"

# ---- key_command failures: the profile and the status, never the output ---------------------
prun --profile broken sync
check "failing key_command: exit 2" refused 2 "profile broken: key_command .* exit status 3"
check "... never its output" err_lacks "sk_not_a_key"
check "... and no empty cache left for that profile" \
    test ! -e "$XDG_DATA_HOME/rampart/rampart-broken.db"
prun --profile empty sync
check "empty output: refused" refused 2 "profile empty: key_command 'true' .*printed no key"

# ---- `rampart profiles` ----------------------------------------------------------------------
prun profiles
check "profiles: every profile" out_has "^\* default .*$url_a .*api_key .*rampart.db  *[0-9][0-9]*[smhd] ago$"
check "profiles: staging's remote, key source, cache, age" \
    out_has "^  staging .*$url_b .*key_command .*rampart-staging.db  *[0-9][0-9]*[smhd] ago$"
check "profiles: a profile that never synced" out_has "^  broken .* never$"
check "profiles: a profile with no cache" out_has "^  idle  *https*://.*rampart-idle.db  *never$"
check "profiles: no cache was made for it" test ! -e "$XDG_DATA_HOME/rampart/rampart-idle.db"
prun --profile staging profiles --json
check "profiles --json: the selected one" out_has '"name": "staging", "selected": true'
check "profiles --json: last sync and age" \
    out_has '"name": "default", .*"last_sync": "20[0-9-]*T[0-9:]*Z", "last_sync_age_s": [0-9]'
check "profiles --json: never is null" out_has '"name": "empty", .*"last_sync": null'
prun profiles --names
check "profiles --names: one per line" [ "$(tr '\n' ' ' <"$tmp/out")" = "default staging broken empty idle borrows " ]
prun --profile prod profiles
check "profiles with an unknown selection: listed, then the error" \
    refused 2 "unknown profile 'prod'"
check "... the list still shown" out_has "staging"

# ---- the key never in argv: a sync kept busy by a slow listing, seen by ps ------------------
"$RAMPART" --profile staging sync --pull-only >"$tmp/bg.out" 2>"$tmp/bg.err" &
bg=$!
busy() { ps -eo args | grep -q "[r]ampart --profile staging sync"; }
n=0
while ! busy && kill -0 $bg 2>/dev/null && [ $n -lt 200 ]; do
    n=$((n + 1))
    sleep 0.02 # polling for the process
done
ps -eo args >"$tmp/ps"
wait $bg
cat "$tmp/bg.out" "$tmp/bg.err" >>"$all"
check "ps saw the sync" grep -q "rampart --profile staging sync" "$tmp/ps"
check "no process's argv holds a key" sh -c "! grep -q -e '$key_a' -e '$key_b' '$tmp/ps'"

# ---- a file holding api_key in any section: 600, or refused with the fix ---------------------
chmod 644 "$cfg"
prun --profile staging status
check "644 with api_key (in another section): refused" refused 2 "chmod 600 $cfg"
sed -e '/^api_key/d' "$cfg" >"$tmp/cfg" && cat "$tmp/cfg" >"$cfg"
printf '[profile.ci]\napi_url = %s\napi_key = %s\n' "$url_a" "$key_a" >>"$cfg"
prun status
check "644 with api_key only in [profile.ci]: refused too" refused 2 "chmod 600"
chmod 600 "$cfg"
prun --profile ci status
check "600: taken" out_has "remote  *$url_a (API key from profile section)"

check "no output ever held a key" sh -c "! grep -q -e '$key_a' -e '$key_b' '$all'"
checks_done
exit 0
