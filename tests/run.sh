#!/bin/sh
# Runs every test layer of one build and ends with one line that sums them up:
#   total: N passed, N failed, N skipped
# usage: tests/run.sh BUILD_DIR    (unit binaries in BUILD_DIR/tests, rampart in BUILD_DIR)
# TESTS_DIR: where e2e/ and tui/ are (default: beside this script; the runner's
# own test points it at scripts of its making).
#
# Two workers at once (TEST_JOBS=1: one): each takes the next test from one
# queue (the unit tests, then the end-to-end ones) until none is left; then the
# console's tests, one at a time. Most of a test's time is spent waiting on the processes it starts
# (servers, syncs, a terminal), so two at once take little more than half the
# time; every test polls for what it waits for (none relies on time), and each
# has its own directory, ports, tmux socket and servers, so no test can see
# another's. The outputs are printed in queue order once all are done.
set -u
build=$1
here=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
RAMPART=$(cd "$build" && pwd)/rampart
export RAMPART
out_dir=$(mktemp -d "${TMPDIR:-/tmp}/rampart-tests.XXXXXX")
trap 'rm -rf "$out_dir"' EXIT INT TERM

# unit_test BINARY: its output; "passed failed skipped" (cmocka's summary lines)
# to fd 3.
unit_test() {
    out=$("$1" 2>&1)
    status=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    if [ "$status" -ne 0 ] && [ -z "$f" ]; then
        echo "$1: exited with status $status"
        f=1
    fi
    echo "${p:-0} ${f:-0} ${s:-0}" >&3
}

# script_test SCRIPT: its output; "passed failed skipped" to fd 3, from its
# "ok", "ok ... # SKIP" and "not ok" lines. Its plan ("1..N", printed by
# checks_done at its end; "1..0 # SKIP WHY" when nothing could run) must be there
# and must match the lines: a script that stopped early, even with status 0,
# fails the run.
script_test() {
    out=$(sh "$1" 2>&1)
    status=$?
    printf '%s\n' "$out"
    all=$(printf '%s\n' "$out" | grep -c '^ok ')
    s=$(printf '%s\n' "$out" | grep -ci '^ok .*# skip')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    p=$((all - s))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $1 exited with status $status"
        f=$((f + 1))
    fi
    plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' | tail -n 1)
    if [ -z "$plan" ]; then
        echo "not ok - $1 stopped before its end: no plan line after $((all + f)) checks"
        f=$((f + 1))
    elif [ "$plan" -eq 0 ] && [ "$all" -eq 0 ] && [ "$f" -eq 0 ]; then
        s=1 # skipped whole: "1..0 # SKIP WHY"
        printf '%s\n' "$out" | grep -q '^1\.\.0 # SKIP' ||
            { echo "not ok - $1 ran no check"; f=1; }
    elif [ "$((all + f))" -ne "$plan" ]; then
        echo "not ok - $1 ran $((all + f)) checks of its plan of $plan"
        f=$((f + 1))
    fi
    echo "$p $f $s" >&3
}

queue="$out_dir/queue"
n=0
for t in "$build"/tests/test_* "$here"/e2e/*.sh; do
    case $t in
    *.sh) [ "$(head -c 2 "$t" 2>/dev/null)" = "#!" ] ;; # a test; helpers have no #! line
    *) [ -f "$t" ] && [ -x "$t" ] ;; # not the .d and .log files beside them
    esac || continue
    n=$((n + 1))
    echo "$n $t" >>"$queue"
done

# The next "INDEX PATH" of the queue (nothing when it is empty), under a lock.
take() {
    until mkdir "$queue.lock" 2>/dev/null; do :; done
    line=$(head -n 1 "$queue")
    sed -i 1d "$queue"
    rmdir "$queue.lock"
    printf '%s' "$line"
}

worker() {
    while :; do
        item=$(take)
        [ -n "$item" ] || return 0
        i=${item%% *}
        t=${item#* }
        case $t in
        *.sh) script_test "$t" >"$out_dir/$i.out" 3>"$out_dir/$i.counts" ;;
        *) unit_test "$t" >"$out_dir/$i.out" 3>"$out_dir/$i.counts" ;;
        esac
    done
}

pids=""
j=0
while [ "$j" -lt "${TEST_JOBS:-2}" ]; do
    worker &
    pids="$pids $!"
    j=$((j + 1))
done
for pid in $pids; do wait "$pid"; done
# The console's tests last, one at a time: the tmux ones wait for a screen with a
# bound in time (tui_wait), which a loaded machine should not have to race.
for t in "$here"/tui/*.sh; do
    [ "$(head -c 2 "$t" 2>/dev/null)" = "#!" ] || continue
    n=$((n + 1))
    script_test "$t" >"$out_dir/$n.out" 3>"$out_dir/$n.counts"
done
i=1
while [ "$i" -le "$n" ]; do
    cat "$out_dir/$i.out"
    i=$((i + 1))
done

passed=$(cat "$out_dir"/*.counts | awk '{ s += $1 } END { print s + 0 }')
failed=$(cat "$out_dir"/*.counts | awk '{ s += $2 } END { print s + 0 }')
skipped=$(cat "$out_dir"/*.counts | awk '{ s += $3 } END { print s + 0 }')
# A test that left no count (its worker was killed) fails the run.
[ "$(ls "$out_dir"/*.counts | wc -l)" -eq "$n" ] || failed=$((failed + 1))
echo "total: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
