#!/bin/sh
# What the console says after a sync, headless against a real serve-api with two
# caches on it (two admins): a conflict is called a conflict, never a failure, in
# the header and the status line; the header's counts follow the cache (a resolve
# with R takes the conflict away before any sync); the status line is the
# command line's summary (sync_report_summary), edits pushed included.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/server.sh"
. "$(dirname "$0")/lib.sh"

policy=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
A="$tmp/a.db" # the colleague, on the command line
B="$tmp/b.db" # the admin at the console

play() {
    name=$1
    shift
    headless_play "$B" "$name" "$@"
}
header() { head -n 1 "$tmp/screen.$1" | grep -F -q -- "$2"; }
no_header() { ! head -n 1 "$tmp/screen.$1" | grep -F -q -- "$2"; }
# The status area (it may wrap onto the rows above the last) holds TEXT.
status_area() { tail -n 4 "$tmp/screen.$1" | tr '\n' ' ' | grep -F -q -- "$2"; }
status_lacks() { ! tail -n 4 "$tmp/screen.$1" | grep -q -- "$2"; }

start_server labels || exit 1
run --db "$A" rules create --cidr 10.1.0.0/16 --policy $policy --action allow \
    --description first --sync
run --db "$A" rules create --cidr 10.2.0.0/16 --policy $policy --action deny \
    --description second --sync
run --db "$B" sync
check "setup: B holds both rules" status_is 0
r1=$("$RAMPART" --db "$B" rules list --filter 10.1.0.0 -o name)
r2=$("$RAMPART" --db "$B" rules list --filter 10.2.0.0 -o name)

# ---- two edits pushed: the summary says them -------------------------------------------
run --db "$B" rules update "$r1" --description "first, edited"
run --db "$B" rules update "$r2" --description "second, edited"
play pushed <<'EOF'
key s
wait-sync
dump
EOF
check "pushed: exit 0" status_is 0
check "pushed: the status line counts the updates" \
    status_area 1 "sync: 0 created, 0 deleted, 0 failed; 2 updated"
run --db "$B" sync
check "pushed: the CLI's summary is the same text" out_has "^sync: 0 created, 0 deleted, 0 failed"

# ---- a colleague's edit met: a conflict, not a failure -----------------------------------
run --db "$A" sync
run --db "$B" rules update "$r1" --description mine
run --db "$A" rules update "$r1" --description colleague --sync
play conflict <<'EOF'
key s
wait-sync
dump
key 3
key R
key t
dump
EOF
check "conflict: exit 0" status_is 0
check "conflict: the header says conflict" header 1 "1 conflict"
check "conflict: the header does not say failed" no_header 1 "failed"
check "conflict: the status line is no error" status_lacks 1 "error:"
check "conflict: the status line names the new conflict" status_area 1 "1 new conflict"
check "conflict: ... and how to resolve it" status_area 1 "R on a conflict resolves it"
check "conflict: the status line does not call it failed" status_lacks 1 "[1-9] failed"
check "resolve: taken" status_area 2 "resolved: took the remote's values"
check "resolve: the header follows the cache (no conflict left)" no_header 2 "conflict"
check "resolve: the header says synced" header 2 "synced"

stop_server
checks_done
exit 0
