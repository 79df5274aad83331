#!/bin/sh
# Runs every test layer of one build and ends with one line that sums them up:
#   total: N passed, N failed
# usage: tests/run.sh BUILD_DIR    (unit binaries in BUILD_DIR/tests, rampart in BUILD_DIR)
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
here=$(cd "$(dirname "$0")" && pwd)
RAMPART=$(cd "$build" && pwd)/rampart
export RAMPART
out_dir=$(mktemp -d "${TMPDIR:-/tmp}/rampart-tests.XXXXXX")
trap 'rm -rf "$out_dir"' EXIT INT TERM

# unit_test BINARY: its output; "passed failed" (cmocka's summary lines) to fd 3.
unit_test() {
    out=$("$1" 2>&1)
    status=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    if [ "$status" -ne 0 ] && [ -z "$f" ]; then
        echo "$1: exited with status $status"
        f=1
    fi
    echo "${p:-0} ${f:-0}" >&3
}

# script_test SCRIPT: its output; "passed failed" (its ok / not ok lines) to fd 3.
script_test() {
    out=$(sh "$1" 2>&1)
    status=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | grep -c '^ok ')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $1 exited with status $status"
        f=1
    fi
    echo "$p $f" >&3
}

queue="$out_dir/queue"
n=0
for t in "$build"/tests/test_* "$here"/e2e/*.sh; do
    case $t in
    *.sh) [ -f "$t" ] ;;
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
    [ -f "$t" ] || continue
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
# A test that left no count (its worker was killed) fails the run.
[ "$(ls "$out_dir"/*.counts | wc -l)" -eq "$n" ] || failed=$((failed + 1))
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
