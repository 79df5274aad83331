#!/bin/sh
# Secrets: a whole session with a known API key (serve-api, syncs, the agent, the
# console headless and in tmux, status/plan/sync --verbose, doctor, the wrong key, an
# unreachable remote), every token it creates captured; then neither the key nor
# any token may show anywhere but where it is meant to: the stdout of
# `creds create --sync` and `creds token`, the agent's token replies and the
# console's token dialog. Looked at: every stdout/stderr and log, the console's
# screens once the dialog is closed and its log view, the argv of every process
# seen while the test runs, every file under HOME but the database (which must
# not hold the key). Also: file modes of everything created, core dumps off.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
. "$here/../tui/lib.sh"

# A directory another uid may use: as root, the processes whose dumpable flag is
# read run as nobody (root owns /proc/PID of every root process, dumpable or not).
other=""
cleanup() {
    rm -f "$tmp/sampling"
    [ -n "${sampler:-}" ] && wait "$sampler" 2>/dev/null
    tui_stop
    stop_agents
    stop_server
    rm -rf "$tmp"
    [ -n "$other" ] && rm -rf "$other"
}
trap cleanup EXIT INT TERM

mkdir -p "$tmp/logs"
# No secret ever goes into the argv of the test's own commands (the sampler below
# would see it): grep gets its pattern through a file, the rest are builtins.
holds() { # holds SECRET FILE
    printf '%s\n' "$1" >"$tmp/pat"
    grep -a -q -F -f "$tmp/pat" "$2"
}
count_of() {
    printf '%s\n' "$1" >"$tmp/pat"
    grep -a -c -F -f "$tmp/pat" "$2"
}
both_set() { [ -n "$1" ] && [ -n "$2" ]; }
n=0
# r NAME ARGS...: run rampart; stdout and stderr kept as logs/NAME.out, .err (all
# scanned at the end unless the name ends in .token: an intended token output,
# whose stderr is still scanned).
r() {
    name=$1
    shift
    run "$@"
    cp "$tmp/out" "$tmp/logs/$name.out"
    cp "$tmp/err" "$tmp/logs/$name.err"
}

# renv NAME VAR=VALUE ARGS...: r with one more environment variable.
renv() {
    name=$1
    assign=$2
    shift 2
    (
        export "${assign?}"
        exec "$RAMPART" "$@"
    ) >"$tmp/logs/$name.out" 2>"$tmp/logs/$name.err"
    status=$?
    cp "$tmp/logs/$name.out" "$tmp/out"
    cp "$tmp/logs/$name.err" "$tmp/err"
}

# ---- argv of every process, sampled while the test runs (one argument a line) -----
: >"$tmp/sampling"
: >"$tmp/argv.now"
(
    while [ -f "$tmp/sampling" ]; do
        cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'
        sleep 0.05 # a sampling period, not a wait for anything
    done | sort -u >"$tmp/argv.seen"
) &
sampler=$!
# The same, at once, at the moments serve-api, the agent and the console are known
# to run: the periodic samples above may miss one on a loaded machine.
sample_argv() {
    cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' >>"$tmp/argv.now"
}

# ---- a session against serve-api ------------------------------------------------------
start_server main || exit 1
KEY=$SERVER_KEY
sample_argv
policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
r rule rules create --cidr 10.0.0.0/8 --policy "$policy" --action allow --description office
r queued creds create --description web --acl 'bind:*.example.com'
r status0 status
r plan0 plan
r sync0 sync --verbose
check "sync --verbose: exit 0" status_is 0
r list creds list --json
WEB=$(sed -n 's/.*"id":"\(cr_[0-9A-Za-z]*\)".*"description":"web".*/\1/p' "$tmp/out" | head -n 1)
r web.token creds token "$WEB"
T_WEB=$(cat "$tmp/out")
check "setup: the synced credential's token is held" both_set "$WEB" "$T_WEB"
r ci.token creds create --description ci --sync
T_CI=$(sed -n 's/^token: //p' "$tmp/out")
CI=$(sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out")
check "setup: creds create --sync prints the token" both_set "$CI" "$T_CI"
once_no_key() { [ "$(count_of "$T_CI" "$tmp/out")" = 1 ] && ! holds "$KEY" "$tmp/out"; }
check "creds create --sync: the token once, never the key" once_no_key
r get creds get "$CI"
r getjson creds get "$CI" --json
r listtext creds list
r status1 status --json
r plan1 plan --json
r sync1 sync --verbose --json
r pull sync --pull-only --verbose
r doctor doctor
check "doctor: the remote reached with the key" grep -q "^ok  *remote  " "$tmp/out"
r doctorjson doctor --json

# ---- error paths ----------------------------------------------------------------------
WRONG=sk_wrong_$(date +%s)_$$
renv wrongkey "RAMPART_API_KEY=$WRONG" sync --verbose
check "the wrong key: refused (exit 2)" status_is 2
renv wrongkey2 "RAMPART_API_KEY=$WRONG" creds create --description refused --sync
check "create --sync with the wrong key: refused" sh -c '[ "$0" != 0 ]' "$status"
# Taken back: the console's sync would send it and show its token first (tokens a
# sync brings wait as "not yet shown" for the console), before the console's own.
r list3 creds list --json
REFUSED=$(sed -n 's/.*"id":"\(local_[0-9A-Za-z]*\)".*"description":"refused".*/\1/p' "$tmp/out" |
    head -n 1)
r discardrefused creds discard "$REFUSED"
check "the refused create is taken back" status_is 0
renv wrongdoctor "RAMPART_API_KEY=$WRONG" doctor
check "doctor with the wrong key: the remote check fails" grep -q "^FAIL  remote  " "$tmp/out"
renv unreachable RAMPART_API_URL=http://127.0.0.1:9 sync --verbose
check "unreachable remote: exit 4" status_is 4
renv plainhttp RAMPART_API_URL=http://example.com sync
check "http to another host: refused" status_is 2
r nosuch creds token cr_nosuchcredential000000000000

# ---- the console, headless: create, sync, the token dialog, closed, the log view -----
cat >"$tmp/console.keys" <<'EOF'
key 2
key c
type console agent
key <Tab>
type bind:console.example.com
key <Enter> <Enter>
key s
wait-sync
dump
key <Enter>
dump
key 4
dump
key g
dump
key Q
EOF
"$RAMPART" tui --headless "$tmp/console.keys" >"$tmp/screens" 2>"$tmp/logs/console.err"
check "headless console: exit 0" [ $? = 0 ]
awk -v dir="$tmp" 'BEGIN { n = 1 } $0 == "----" { n++; next } { print > (dir "/screen." n) }' \
    "$tmp/screens"
r list2 creds list --json
CON=$(sed -n 's/.*"id":"\(cr_[0-9A-Za-z]*\)".*"description":"console agent".*/\1/p' "$tmp/out" |
    head -n 1)
r console.token creds token "$CON"
T_CON=$(cat "$tmp/out")
check "setup: the console's credential has its token" both_set "$CON" "$T_CON"
check "the token dialog showed it" holds "$T_CON" "$tmp/screen.1"

# ---- the agent: tokens over the socket and TCP, refusals -----------------------------
mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
start_agent agent --listen "unix:$tmp/run/a.sock" --listen tcp:127.0.0.1:0 --rate 0
check "agent started" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$sock" "$tcp"
sample_argv
AKEYFILE="$XDG_CONFIG_HOME/rampart/agent.key"
AKEY=$(head -n 1 "$AKEYFILE" 2>/dev/null)
check "the agent's key file exists" [ -n "$AKEY" ]
key_config "$AKEYFILE"
ureq "$sock" "/v1/credentials/$WEB/token"
check "agent: token by id" holds "$T_WEB" "$tmp/out"
ureq "$sock" /v1/tokens/ci
check "agent: token by name" holds "$T_CI" "$tmp/out"
treq "$tcp" "/v1/credentials/$CON/token"
check "agent over TCP: token" holds "$T_CON" "$tmp/out"
printf 'header = "Authorization: Bearer %s"\n' "$WRONG" >"$tmp/wrong.curl"
KEYCONF=$tmp/wrong.curl treq "$tcp" "/v1/credentials/$WEB/token"
refused_no_token() { [ "$status" = 401 ] && ! holds "$T_WEB" "$tmp/out"; }
check "agent: the wrong key gets 401 and no token" refused_no_token
cp "$tmp/out" "$tmp/logs/agent-wrongkey.reply"
ureq "$sock" /credentials
cp "$tmp/out" "$tmp/logs/agent-mirror.reply"
check "agent mirror: tokens null" replied 200 '"token":null'
treq "$tcp" /v1/tokens/web -H "Origin: http://evil.example"
cp "$tmp/out" "$tmp/logs/agent-origin.reply"
check "agent: a browser's request is refused" is 403

# ---- core dumps off, not dumpable: agent, serve-api, console -------------------------
# limits_ok PID: "Max core file size 0 0". not_dumpable PID: /proc/PID belongs to
# root while the process runs as another uid (the kernel's sign of PR_SET_DUMPABLE 0).
limits_ok() { grep -q '^Max core file size *0 *0 ' "/proc/$1/limits"; }
not_dumpable() {
    uid=$(awk '/^Uid:/ { print $2 }' "/proc/$1/status")
    [ "$uid" != 0 ] && [ "$(stat -c %u "/proc/$1/status")" = 0 ]
}
as_other=""
[ "$(id -u)" = 0 ] && as_other="setpriv --reuid 65534 --regid 65534 --clear-groups"
other=$(mktemp -d "${TMPDIR:-/tmp}/rampart-other.XXXXXX")
[ "$(id -u)" = 0 ] && chown 65534:65534 "$other"
check "agent: core file size limit 0" limits_ok "$agent_pid"
check "serve-api: core file size limit 0" limits_ok "$server_pid"

# wait_file FILE: polls up to 10 s for FILE to be non-empty.
wait_file() {
    i=0
    while [ ! -s "$1" ] && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    [ -s "$1" ]
}
# as_other_checked NAME LOG READY CMD...: CMD --ready-file READY in the background as
# the other uid (stopped with the agents), its stderr in LOG; once READY is written,
# the process must be not dumpable and have a core file size limit of 0.
as_other_checked() {
    who=$1 log=$2 ready=$3
    shift 3
    $as_other "$@" --ready-file "$ready" 2>"$log" &
    opid=$!
    agents="$agents $opid"
    wait_file "$ready"
    check "$who (as another uid): not dumpable" not_dumpable "$opid"
    check "$who (as another uid): core file size limit 0" limits_ok "$opid"
}
as_other_checked agent "$tmp/other-agent.log" "$other/o.ready" \
    env HOME="$other" XDG_DATA_HOME="$other/data" XDG_CONFIG_HOME="$other/config" \
    XDG_RUNTIME_DIR="$other/run" "$RAMPART" agent --listen "unix:$other/o.sock" --db "$other/o.db"
printf '%s\n' "$KEY" >"$other/k"
chmod 600 "$other/k"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$other/k"
as_other_checked serve-api "$tmp/other-server.log" "$other/s.ready" \
    env HOME="$other" XDG_CONFIG_HOME="$other/config" "$RAMPART" serve-api \
    --listen tcp:127.0.0.1:0 --db "$other/s.db" --api-key-file "$other/k"

tui_start 80x24 xterm-256color "env HOME=$other XDG_DATA_HOME=$other/data \
XDG_CONFIG_HOME=$other/config $as_other $RAMPART --db $other/o.db tui --no-agent"
tui_wait "[1 Rules]" >/dev/null
sample_argv
cpid=$(tui_tmux display-message -p -t "$tui_session" '#{pane_pid}')
check "console: core file size limit 0" limits_ok "$cpid"
check "console (as another uid): not dumpable" not_dumpable "$cpid"
tui_keys Q
tui_stop
stop_agents
stop_server

# ---- the scan ---------------------------------------------------------------------------
rm -f "$tmp/sampling"
wait "$sampler"
sampler=""
sort -u "$tmp/argv.now" "$tmp/argv.seen" -o "$tmp/argv.seen"
SECRETS="$KEY $WRONG $AKEY $T_WEB $T_CI $T_CON"
# leaks FILE...: names each file holding a secret (and which one); true when none.
leaks() {
    found=0
    for s in $SECRETS; do
        for f in "$@"; do
            if [ -f "$f" ] && holds "$s" "$f"; then
                echo "#   secret ${s%"${s#????}"}... in ${f#"$tmp"/}"
                found=1
            fi
        done
    done
    return $found
}
not_token_outputs() {
    for f in "$tmp"/logs/*; do
        case $f in *.token.out) ;; *) echo "$f" ;; esac
    done
}
# shellcheck disable=SC2046 # file names made here, no spaces
check "no secret in any stdout, stderr or reply but the token outputs" leaks $(not_token_outputs)
check "no secret in the logs of serve-api and the agents" leaks "$tmp"/*.log
check "no secret in the console's screens after the dialog closed (log view included)" \
    leaks "$tmp/screen.2" "$tmp/screen.3" "$tmp/screen.4"
check "the log view was dumped" grep -q "4 Log" "$tmp/screen.3"
check "no secret in any process's argv" leaks "$tmp/argv.seen"
check "argv sampled: serve-api, the agent and the console were seen" \
    sh -c 'grep -qx serve-api "$0" && grep -qx agent "$0" && grep -qx tui "$0"' "$tmp/argv.seen"
FILES=$(find "$HOME" -type f ! -name '*.db' ! -name '*.db-wal' ! -name '*.db-shm' \
    ! -name '*.db-journal' ! -path "$AKEYFILE")
# shellcheck disable=SC2086
check "no secret in any file under HOME but the database and the agent key" leaks $FILES
dbfiles=$(find "$HOME" -name '*.db*' -type f)
db_lacks_key() {
    for f in $dbfiles; do
        if holds "$KEY" "$f"; then return 1; fi
    done
}
check "the database never holds the API key" db_lacks_key
check "some files were checked" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$FILES" "$dbfiles"
find "$HOME" -mindepth 1 -perm /077 >"$tmp/out"
check "every file and directory created under HOME: no access for group or others" \
    sh -c '[ ! -s "$0" ]' "$tmp/out"
check "the database files are 0600" sh -c 'for f; do [ "$(stat -c %a "$f")" = 600 ] || exit 1; done' \
    $dbfiles
check "the agent key file is 0600" [ "$(stat -c %a "$AKEYFILE")" = 600 ]
find "$HOME" -mindepth 1 -type d ! -perm 700 >"$tmp/out"
check "every directory created under HOME is 0700" sh -c '[ ! -s "$0" ]' "$tmp/out"
checks_done
