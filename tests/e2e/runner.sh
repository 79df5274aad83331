#!/bin/sh
# tests/run.sh itself: it counts a skip as a skip, not a pass, and fails a
# script that stops before its end (status 0 and no plan) or whose lines do not
# add up to its plan, so no check can be lost silently.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$tmp/t/e2e" "$tmp/t/tui" "$tmp/build/tests"
: >"$tmp/build/rampart"
lib="$root/tests/e2e/lib.sh"
# script NAME BODY: a test script of the runner's queue, sourcing the real lib.sh.
script() {
    printf '#!/bin/sh\n. "%s"\n%s\n' "$lib" "$2" >"$tmp/t/e2e/$1.sh"
}
# runs: tests/run.sh over the scripts made so far; its output in $tmp/out.
runs() {
    rm -f "$tmp/t/e2e/"*.sh
    for s in "$@"; do cp "$tmp/lib/$s.sh" "$tmp/t/e2e/"; done
    RAMPART="$tmp/build/rampart" TESTS_DIR="$tmp/t" sh "$root/tests/run.sh" "$tmp/build" \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
}
mkdir -p "$tmp/lib"
script whole 'check "one" true
check "two" true
checks_done'
script skipping 'check "one" true
skip "two" "not here"
checks_done'
script early 'check "one" true
exit 0
check "two" true
checks_done'
script short 'plan 3
check "one" true
check "two" true
checks_done'
script none 'skip_all "nothing can run here"'
script failing 'check "one" false
checks_done'
mv "$tmp/t/e2e/"*.sh "$tmp/lib/"

runs whole skipping none
check "passes and skips apart: 3 passed, 0 failed, 2 skipped" \
    sh -c '[ "$0" -eq 0 ] && grep -qx "total: 3 passed, 0 failed, 2 skipped" "$1"' "$status" "$tmp/out"
runs whole early
check "a script that stops early with status 0 fails the run" \
    sh -c '[ "$0" -ne 0 ] && grep -q "early.sh stopped before its end: no plan line after 1 checks" "$1" &&
           grep -qx "total: 3 passed, 1 failed, 0 skipped" "$1"' "$status" "$tmp/out"
runs short
check "a script that runs fewer checks than its plan fails the run" \
    sh -c '[ "$0" -ne 0 ] && grep -q "short.sh ran 2 checks of its plan of 3" "$1"' "$status" "$tmp/out"
runs failing
check "a failed check fails the run" \
    sh -c '[ "$0" -ne 0 ] && grep -qx "total: 0 passed, 1 failed, 0 skipped" "$1"' "$status" "$tmp/out"
checks_done
