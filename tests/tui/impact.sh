#!/bin/sh
# The pending view's impact (setting impact_log), headless: the worker reads the
# logs beside the console and the header shows what the queue would flip; a
# queue that flips nothing and a log that cannot be read say so.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
db="$tmp/cache.db"
cat >"$tmp/synced.json" <<JSON
[{"id": "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01", "cidr": "0.0.0.0/0", "ip_policy": {"id": "$P"},
  "action": "allow", "created_at": "2026-01-01T00:00:00Z"},
 {"id": "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc02", "cidr": "198.51.100.0/24", "ip_policy": {"id": "$P"},
  "action": "deny", "created_at": "2026-01-01T00:00:00Z"}]
JSON
run --db "$db" rules import "$tmp/synced.json"
check "setup: two synced rules" status_is 0
printf '203.0.113.9\n203.0.113.9\n203.0.113.9\n198.51.100.7\n8.8.8.8\n' >"$tmp/a.log"
gzip -c "$tmp/a.log" >"$tmp/a.log.gz"

play() { headless_play "$db" "$@"; }

export RAMPART_IMPACT_LOG="$tmp/a.log"
play none <<'EOF'
key 3
wait-for impact: no client of the logs flips
dump
EOF
check "nothing queued: exit 0" status_is 0
check "nothing queued: the header says no client flips" screen 1 "impact: no client of the logs flips"

run --db "$db" rules create --policy $P --action deny --cidr 203.0.113.0/24
run --db "$db" rules delete ipr_2VhYfCwqPkX0n4sF5nYfW3eJc02
# shellcheck disable=SC2089,SC2090 # the quotes are the setting's (words), not the shell's
export RAMPART_IMPACT_LOG="'$tmp/a.log.gz'"
play queued --size 120x30 <<'EOF'
key 3
wait-for impact: 1 denied (3 req), 1 allowed (1 req)
dump
key 1
dump
EOF
check "a deny create and a delete queued: exit 0" status_is 0
check "the pending view's header: 1 denied, 1 allowed" \
    screen 1 "impact: 1 denied (3 req), 1 allowed (1 req)"
check "only the pending view shows it" no_screen 2 "impact:"

# shellcheck disable=SC2090
export RAMPART_IMPACT_LOG="$tmp/missing.log"
play missing <<'EOF'
key 3
wait-for impact: cannot open
dump
EOF
check "a log that cannot be read: said in the header, exit 0" \
    sh -c '[ "$0" -eq 0 ] && grep -q "impact: cannot open" "$1"' "$status" "$tmp/screen.1"

# A FIFO nobody writes (or "-", the console's own keyboard) would block the
# worker in open() or read() for good, and the console's quit waits for it.
mkfifo "$tmp/fifo.log"
for log in "$tmp/fifo.log" -; do
    export RAMPART_IMPACT_LOG="$log"
    printf 'key 3\nwait-for impact: impact_log\ndump\n' >"$tmp/fifo.keys"
    timeout 20 "$RAMPART" --db "$db" tui --no-agent --size 200x30 --headless "$tmp/fifo.keys" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    status=$?
    check "impact_log $log: refused in the header, the console quits (exit 0)" \
        sh -c '[ "$0" -eq 0 ] && grep -q "impact: impact_log: .*regular file" "$1"' \
        "$status" "$tmp/out"
done

unset RAMPART_IMPACT_LOG
play unset <<'EOF'
key 3
dump
EOF
check "no impact_log: nothing said" no_screen 1 "impact:"
checks_done
