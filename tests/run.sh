#!/bin/sh
# Runs every test layer of one build and ends with one line that sums them up:
#   total: N passed, N failed
# usage: tests/run.sh BUILD_DIR    (unit binaries in BUILD_DIR/tests, rampart in BUILD_DIR)
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0

# cmocka prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)..." per group.
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    out=$("$t" 2>&1)
    status=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ "$status" -ne 0 ] && [ -z "$f" ]; then
        echo "$t: exited with status $status"
        failed=$((failed + 1))
    fi
done

RAMPART=$(cd "$build" && pwd)/rampart
export RAMPART
for t in "$here"/e2e/*.sh "$here"/tui/*.sh; do
    [ -f "$t" ] || continue
    out=$(sh "$t" 2>&1)
    status=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | grep -c '^ok ')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $t exited with status $status"
        failed=$((failed + 1))
    fi
done

echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
