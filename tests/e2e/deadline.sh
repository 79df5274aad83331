#!/bin/sh
# --timeout is a deadline for the request in flight too: against a remote that
# never answers, a PATCH whose reply is delayed 30 s, and a listing trickled at
# 50 bytes/s, `sync --timeout 2` ends by itself (an outer `timeout 20` that
# had to kill it exits 124), says the deadline passed, and loses nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
DB="$tmp/c.db"

# ended_by_itself: the last run was not killed by the outer timeout.
ended_by_itself() { [ "$status" -ne 124 ] && [ "$status" -ne 137 ]; }
said_deadline() { grep -q "deadline" "$tmp/err"; }

# ---- a remote that accepts and never answers ----
python3 - "$tmp/silent.ready" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
deadline = time.time() + 60
while time.time() < deadline:
    s.settimeout(1)
    try:
        held.append(s.accept()[0])  # read nothing, answer nothing
    except OSError:
        pass
EOF
silent_pid=$!
n=0
while [ ! -s "$tmp/silent.ready" ] && [ $n -lt 250 ]; do
    n=$((n + 1))
    sleep 0.02 # polling for the ready file
done
RAMPART_API_URL="http://127.0.0.1:$(cat "$tmp/silent.ready")" RAMPART_API_KEY=k RAMPART_RATE=0 \
    timeout 20 "$RAMPART" --db "$DB" sync --timeout 2 >"$tmp/out" 2>"$tmp/err"
status=$?
kill "$silent_pid" 2>/dev/null
wait "$silent_pid" 2>/dev/null
check "a remote that never answers: sync --timeout 2 ends by itself" ended_by_itself
check "... exit 4, saying the deadline passed" sh -c '[ "$0" -eq 4 ] && grep -q deadline "$1"' \
    "$status" "$tmp/err"

# ---- a PATCH whose reply comes 30 s late ----
start_server main --faults "patch_rule:delay=30000@1" || exit 1
run --db "$DB" rules create --cidr 10.0.0.0/8 --policy $P --action allow --sync
rule=$("$RAMPART" --db "$DB" rules list -o name)
run --db "$DB" rules update "$rule" --description late
timeout 20 "$RAMPART" --db "$DB" sync --timeout 2 >"$tmp/out" 2>"$tmp/err"
status=$?
check "a PATCH delayed 30 s: sync --timeout 2 ends by itself" ended_by_itself
check "... exit 4, saying the deadline passed" said_deadline
check "... the edit is not lost: still edited here (the server applied it: the next look settles it)" \
    sh -c '"$0" --db "$1" rules get "$2" --json | grep -q "\"state\": \"edited\""' \
    "$RAMPART" "$DB" "$rule"
run --db "$DB" sync
check "... and the next sync settles it" status_is 0
run --db "$DB" rules get "$rule" --json
check "... synced, with the description sent" \
    sh -c 'grep -q "\"state\": \"synced\"" "$0" && grep -q "\"description\": \"late\"" "$0"' \
    "$tmp/out"

# ---- a listing trickled at 50 bytes/s ----
# 40 more rules: a page of some 16 kB, five minutes at that pace.
i=1
while [ $i -le 40 ]; do
    printf '{"cidr": "10.%d.0.0/16", "ip_policy_id": "%s", "action": "deny"}\n' $i $P
    i=$((i + 1))
done | sed '1s/^/[/; $!s/$/,/; $s/$/]/' >"$tmp/more.json"
run --db "$DB" rules import "$tmp/more.json"
run --db "$DB" sync
check "setup: 41 rules on the server" status_is 0
start_server main --faults "list_rules:trickle=20@1+" || exit 1
timeout 20 "$RAMPART" --db "$DB" sync --pull-only --timeout 2 >"$tmp/out" 2>"$tmp/err"
status=$?
check "a listing at 50 bytes/s: sync --timeout 2 ends by itself" ended_by_itself
check "... exit 4, saying the deadline passed" said_deadline
run --db "$DB" rules list -o name
check "... the cache is as it was (a cut listing marks nothing deleted)" out_has "$rule"
stop_server
checks_done
exit 0
