#!/bin/sh
# What a running sync shows and how it stops: --json event lines (one JSON object a
# line, the report last), the --progress line with its countdown during a 429
# wait, quiet when not a terminal, and --timeout stopping a sync against a slow
# server with nothing lost. Real rampart processes against a real serve-api.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P1=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is missing (the JSON checks need it)"
    exit 0
fi

# json_lines FILE: every line one JSON object with a known "event", the report last
# and only last; prints what is wrong.
json_lines() {
    python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
events = []
for n, line in enumerate(lines, 1):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON: %s: %r" % (n, e, line[:80]))
    if not isinstance(obj, dict) or obj.get("event") not in ("progress", "wait", "log", "report"):
        sys.exit("line %d has no known event: %r" % (n, line[:80]))
    events.append(obj["event"])
if not events or events[-1] != "report" or events.count("report") != 1:
    sys.exit("the report is not the one last line: %r" % events[-3:])
PY
}

# events FILE EVENT [KEY=VALUE...]: how many lines of FILE are EVENT with those values
# (strings compared as text).
events() {
    python3 - "$@" <<'PY'
import json, sys
path, event, wants = sys.argv[1], sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]]
n = 0
for line in open(path):
    obj = json.loads(line)
    if obj.get("event") == event and all(str(obj.get(k)) == v for k, v in wants):
        n += 1
print(n)
PY
}

queue_rules() { # queue_rules DB FROM TO: rules 10.FROM.0.0/16 .. 10.TO.0.0/16
    i=$2
    while [ "$i" -le "$3" ]; do
        "$RAMPART" --db "$1" rules create --cidr "10.$i.0.0/16" --policy $P1 --action allow \
            >/dev/null || fail "queueing rule $i"
        i=$((i + 1))
    done
}

# ---- --json: one event a line, the report last ----
start_server plain || exit 1
A="$tmp/a.db"
queue_rules "$A" 1 4
run --db "$A" creds create --description "progress agent"
run --db "$A" sync --json --verbose
check "sync --json: exit 0" status_is 0
check "sync --json: every line a JSON object with an event, the report last" json_lines "$tmp/out"
check "sync --json: progress events of the push" \
    [ "$(events "$tmp/out" progress phase=push)" -ge 1 ]
check "sync --json: progress events of the pull" \
    [ "$(events "$tmp/out" progress phase=pull)" -ge 1 ]
check "sync --json: --verbose log lines as log events" \
    [ "$(events "$tmp/out" log level=info)" -ge 1 ]
check "sync --json: the report says 5 created" [ "$(events "$tmp/out" report created=5)" -eq 1 ]
check "sync --json: the last line is the report" sh -c 'tail -n 1 "$0" | grep -q "^{\"event\": \"report\", \"converged\": true"' "$tmp/out"
cred=$(server_ids credentials)
token=$("$RAMPART" --db "$A" creds token "$cred")
check "sync --json: the token held here" [ -n "$token" ]
check "sync --json: no token in any event" out_lacks "$token"
check "sync --json: no token on stderr" err_lacks "$token"
check "sync --json, stderr not a terminal: no progress line" err_lacks "^push .*\["
run --db "$A" sync --json
check "sync --json, nothing to push: still the report last" json_lines "$tmp/out"

# ---- a 429 with Retry-After: a countdown, and a wait event naming the cause ----
start_server limited --faults 'create_rule:429@1:retry-after=2' || exit 1
B="$tmp/b.db"
queue_rules "$B" 1 2
run --db "$B" sync --progress
check "sync --progress through a 429: exit 0" status_is 0
tr '\r' '\n' <"$tmp/err" >"$tmp/err.lines"
cp "$tmp/err.lines" "$tmp/err"
check "--progress: the wait counts down, naming the 429" \
    sh -c 'grep -q "waiting 2s (rate limited 429)" "$0" && grep -q "waiting 1s (rate limited 429)" "$0"' \
    "$tmp/err"
check "--progress: the counts of the push" err_has "push .*/2 \["
check "--progress: an ETA" err_has "eta "
check "--progress: no escape sequences when not a terminal" sh -c '! grep -q "$(printf "\033")" "$0"' "$tmp/err"
check "--progress: the report on stdout" out_has "2 created"

start_server limited2 --faults 'create_rule:429@1:retry-after=2' || exit 1
C="$tmp/c.db"
queue_rules "$C" 1 2
run --db "$C" sync --json
check "sync --json through a 429: exit 0" status_is 0
check "sync --json through a 429: lines are JSON, the report last" json_lines "$tmp/out"
check "sync --json through a 429: wait events with cause rate_limited" \
    [ "$(events "$tmp/out" wait cause=rate_limited)" -ge 1 ]
check "sync --json through a 429: the wait names the push it paused" \
    [ "$(events "$tmp/out" wait cause=rate_limited phase=push)" -ge 1 ]
check "sync --json through a 429: the wait carries the 429" \
    grep -q '"event": "wait".*"failure": {"kind": "rate_limited", "http_status": 429' "$tmp/out"

start_server limited3 --faults 'create_rule:429@1:retry-after=2' || exit 1
D="$tmp/d.db"
queue_rules "$D" 1 2
run --db "$D" sync
check "sync without --progress, stderr not a terminal: exit 0" status_is 0
check "... and quiet: no progress line" err_lacks "waiting"
check "... no counts either" err_lacks "push .*/2 \["
check "... but the warning of the 429 pause" err_has "warning: rate limited"

# ---- --timeout: a slow server, the sync stops, nothing lost ----
start_server slow --faults 'create_rule:delay=1500@1+' || exit 1
E="$tmp/e.db"
queue_rules "$E" 1 6
started=$(date +%s)
run --db "$E" sync --timeout 2
elapsed=$(($(date +%s) - started))
check "--timeout 2 against replies 1.5 s late: exit 4" status_is 4
check "... stopped within a few seconds of the deadline (${elapsed}s)" [ "$elapsed" -le 6 ]
check "... says it stopped early, what is left and why" \
    err_has "sync stopped early: [1-9][0-9]* rows pending, 0 need attention, nothing lost; its deadline of 2 s passed"
check "... and what was done" err_has "done [0-9]* created"
check "... the typed failure" err_has "failure: timed_out"
check "... the report of what was done" out_has "^sync: [0-9]* created"
created=$(server_count ip_policy_rules)
check "... not every rule reached the server ($created of 6)" [ "$created" -lt 6 ]
run --db "$E" plan
check "... the rest is still queued" out_has "^+ rule"

run --db "$E" sync --timeout 2 --json
check "--timeout --json: exit 4" status_is 4
check "--timeout --json: lines are JSON, the report last" json_lines "$tmp/out"
check "--timeout --json: the report's failure is timed_out" \
    grep -q '"event": "report", "converged": false.*"failure": {"kind": "timed_out"' "$tmp/out"

start_server slow || exit 1 # the same server's data, no more delay
run --db "$E" sync
check "a later sync converges" status_is 0
check "... every rule on the server once" [ "$(server_count ip_policy_rules)" -eq 6 ]
run --db "$E" plan
check "... nothing left to do" out_has "Nothing to do"
checks_done
