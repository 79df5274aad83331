#!/bin/sh
# The console's sync status, headless against a real serve-api with --faults: the
# header and the log view name the cause of a wait or a failure from the engine's
# typed progress and report ("rate limited (429), retry in 5s" counting down,
# "server error 500: <msg> (op_…)" with its operation id in the log's details,
# "unreachable, retry in …"); the header's age after a restart comes from the
# cache's last sync; the idle auto-pull runs on the console's clock (moved by
# `tick`, no sleeps): after the interval, never while a form is open or right
# after a key.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a

# play NAME DB [OPTIONS]: run the script $tmp/NAME.keys (from stdin) headless at
# 160x24 (the long labels fit); one file per dumped screen, $tmp/screen.N.
play() {
    name=$1
    pdb=$2
    shift 2
    headless_play "$pdb" "$name" --size 160x24 "$@"
}
header() { head -n 1 "$tmp/screen.$1" | grep -E -q -- "$2"; }
queue_rule() { "$RAMPART" --db "$1" rules create --cidr "$2" --policy "$policy" --action deny >/dev/null; }

# ---- 429: the cause and a countdown -------------------------------------------------------
db="$tmp/rl.db"
start_server rl --faults "create_rule:429@1:retry-after=5" || exit 1
queue_rule "$db" 10.1.0.0/16
play rl "$db" <<'EOF'
key s
wait-for rate limited (429), retry in
dump
wait-for rate limited (429), retry in 3s
dump
wait-sync
key 4
dump
EOF
check "429: exit 0" status_is 0
check "429: the header names it with the wait" header 1 "rate limited \(429\), retry in [45]s"
check "429: the push's count stays in sight" header 1 "pushing 0 of 1, rate limited \(429\)"
check "429: not labelled as anything else" no_screen 1 "server error"
check "429: the countdown moves" header 2 "rate limited \(429\), retry in 3s"
check "429: then synced" header 3 "synced [0-9]+s ago"
check "429: the log names the wait" screen 3 "waiting: rate limited (429)"

# ---- 500: the server's message and the operation id ------------------------------------
db="$tmp/se.db"
start_server se --faults "create_rule:500@1" || exit 1
queue_rule "$db" 10.2.0.0/16
play se "$db" <<'EOF'
key s
wait-for server error 500
dump
wait-sync
key 4 /
type waiting
key <Enter> <Enter>
dump
EOF
check "500: exit 0" status_is 0
check "500: the header names it, its message and operation id" \
    header 1 "server error 500: [^,]*injected[^,]* \(op_[0-9A-Za-z]+\), retry in [0-9]+s"
check "500: not called a rate limit" no_screen 1 "rate limit"
check "500: the log line's details: the cause" screen 2 "cause        server error 500"
check "500: the log line's details: the status" screen 2 "http status  500"
check "500: the log line's details: the operation id" screen 2 "operation    op_"
check "500: the log line's message" screen 2 "waiting: server error 500: internal error"
op=$(sed -n 's/.*operation *\(op_[0-9A-Za-z]*\).*/\1/p' "$tmp/screen.2" | head -n 1)
check "500: the details' operation id is the one the line names" \
    screen 2 "injected by --faults) ($op), retry in"

# At 80 columns the header keeps the cause and the countdown (the short form).
db="$tmp/se80.db"
start_server se80 --faults "create_rule:500@1" || exit 1
queue_rule "$db" 10.3.0.0/16
cat >"$tmp/se80.keys" <<'EOF'
key s
wait-for server error 500, retry in
dump
wait-sync
EOF
"$RAMPART" --db "$db" tui --no-agent --headless "$tmp/se80.keys" >"$tmp/out" 2>"$tmp/err"
check "500 at 80 columns: the short form" sh -c "head -n 1 '$tmp/out' | grep -q 'server error 500, retry in [0-9]*s'"

# ---- unreachable ------------------------------------------------------------------------------
db="$tmp/down.db"
start_server down || exit 1
queue_rule "$db" 10.4.0.0/16
stop_server # RAMPART_API_URL still names its (now closed) port
play down "$db" <<'EOF'
key s
wait-for unreachable, retry in
dump
key 4
dump
EOF
check "unreachable: exit 0" status_is 0
check "unreachable: the header" header 1 "unreachable, retry in [0-9]+s"
check "unreachable: no other cause" no_screen 1 "rate limit"
check "unreachable: the log" screen 2 "unreachable"
check "unreachable: the row stays queued" sh -c "'$RAMPART' --db '$db' rules list | grep -q 'new'"

# ---- a refused key: named, never shown ---------------------------------------------------------
db="$tmp/key.db"
start_server key || exit 1
queue_rule "$db" 10.7.0.0/16
good_key=$RAMPART_API_KEY
RAMPART_API_KEY=sk_wrong_key_$$
play key "$db" <<'EOF'
key s
wait-sync
dump
key 4
dump
EOF
check "key: exit 0" status_is 0
check "key: the header says the key was refused" header 1 "API key refused"
check "key: the log says why the sync stopped" screen 2 "sync stopped: API key refused"
check "key: the key is never shown" sh -c "! grep -q 'sk_wrong_key' '$tmp/out'"
RAMPART_API_KEY=$good_key

# ---- pacing: the pace the budget allows ---------------------------------------------------------
db="$tmp/paced.db"
start_server paced --faults "create_rule:delay=300@1+" || exit 1
for i in 1 2 3 4 5 6; do queue_rule "$db" "10.8.$i.0/24"; done
RAMPART_RATE=20 RAMPART_WINDOW=10 RAMPART_SHARE=100 play paced "$db" <<'EOF'
key s
wait-for paced: 2.0 req/s
dump
wait-sync
dump
EOF
check "paced: exit 0" status_is 0
check "paced: the header gives the pace" header 1 "pushing [0-9] of 6, paced: 2.0 req/s"
check "paced: not a rate limit" no_screen 1 "rate limited"
check "paced: then synced" header 2 "synced [0-9]+s ago"

# ---- the header's age after a restart: the cache's last sync ---------------------------------
db="$tmp/age.db"
start_server age || exit 1
queue_rule "$db" 10.5.0.0/16
play fresh "$db" <<'EOF'
dump
EOF
check "age: never synced before any sync" header 1 "never synced"
run --db "$db" sync
check "age: the command line syncs" status_is 0
play age "$db" <<'EOF'
dump
tick 125
dump
EOF
check "age: exit 0" status_is 0
check "age: a restart reads the stored last sync" header 1 "synced [0-9]s ago"
check "age: not never synced" no_screen 1 "never synced"
check "age: the age moves with the clock" header 2 "synced 2m ago"

# ---- idle auto-pull on the console's clock ----------------------------------------------------
db="$tmp/auto.db"
start_server auto || exit 1
queue_rule "$db" 10.6.0.0/16
api POST /ip_policy_rules "{\"cidr\":\"10.66.0.0/16\",\"ip_policy_id\":\"$policy\",\"action\":\"allow\"}" >/dev/null
RAMPART_AUTO_PULL=300
export RAMPART_AUTO_PULL
play auto "$db" <<'EOF'
tick 299
wait-sync
dump
tick 2
wait-sync
dump
key 4
dump
EOF
check "auto-pull: exit 0" status_is 0
check "auto-pull: nothing before the interval" header 1 "never synced"
check "auto-pull: nothing listed before the interval" no_screen 1 "10.66.0.0/16"
check "auto-pull: pulled after the interval" screen 2 "10.66.0.0/16"
check "auto-pull: the header counts the queued row left" header 2 "1 pending"
check "auto-pull: pull only: the queued rule stays new" sh -c "grep '10.6.0.0/16' '$tmp/screen.2' | grep -q ' new '"
check "auto-pull: logged" screen 3 "automatic pull (idle): 1 rules, 0 credentials listed"
check "auto-pull: no status line message" no_screen 2 "sync started"

db="$tmp/form.db"
start_server form || exit 1
api POST /ip_policy_rules "{\"cidr\":\"10.77.0.0/16\",\"ip_policy_id\":\"$policy\",\"action\":\"allow\"}" >/dev/null
play prompt "$db" <<'EOF'
key /
tick 900
wait-sync
dump
EOF
check "prompt: exit 0" status_is 0
check "prompt: no pull while the filter is typed" header 1 "never synced"
check "prompt: nothing listed" sh -c "! grep -q 'GET /ip_policy_rules' '$tmp/form.server.log'"

# wait-sync before each dump: a pull that started has ended (the header would say).
play form "$db" <<'EOF'
key c
tick 900
wait-sync
dump
key <Esc>
tick 3
wait-sync
dump
tick 3
wait-sync
dump
EOF
check "form: exit 0" status_is 0
check "form: no pull while the form is open" header 1 "never synced"
check "form: the form is still open" screen 1 "Create rule"
check "form: not right after a key" header 2 "never synced"
check "form: once closed and quiet, it pulls" screen 3 "10.77.0.0/16"
check "form: the header's age" header 3 "synced 0s ago"

lists() { grep -c "GET /ip_policy_rules" "$tmp/form.server.log"; }
n_before=$(lists)
RAMPART_AUTO_PULL=0
play off "$db" <<'EOF'
tick 100000
wait-sync
dump
EOF
check "auto_pull 0: exit 0" status_is 0
check "auto_pull 0: nothing listed" sh -c "[ $(lists) = $n_before ]"
RAMPART_AUTO_PULL=300
play ro "$db" --readonly <<'EOF'
tick 100000
wait-sync
dump
EOF
check "read-only: exit 0" status_is 0
check "read-only: no auto-pull" sh -c "[ $(lists) = $n_before ]"

printf 'tick soon\n' >"$tmp/bad.keys"
run --db "$db" tui --no-agent --headless "$tmp/bad.keys"
check "tick: a bad value is refused" refused 2 "'tick' needs seconds"
checks_done
exit 0
