#!/bin/sh
# Runs every libFuzzer target of a build for SECONDS each, JOBS at a time, from its
# seed corpus (tests/fuzz/corpus/<target>, never written to: new inputs go to
# BUILD/fuzz-corpus/<target>), with its dictionary when there is one. Ends with one
# table: executions, exec/s, coverage (cov: edges, ft: features) and corpus size
# per target. Exits 1 when a target crashed, leaked or timed out: the input that
# did it is kept in BUILD/fuzz-crashes/ and named in the output.
# usage: tests/fuzz/run.sh BUILD_DIR [SECONDS] [JOBS]
set -u
build=$1
seconds=${2:-60}
jobs=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
logs=$build/fuzz-logs
mkdir -p "$logs" "$build/fuzz-crashes"

targets=""
for t in "$here"/fuzz_*.c; do
    name=$(basename "$t" .c)
    [ -x "$build/fuzz/$name" ] || { echo "missing $build/fuzz/$name: build it first"; exit 2; }
    targets="$targets $name"
done

run_one() {
    name=$1
    short=${name#fuzz_}
    work=$build/fuzz-corpus/$short
    mkdir -p "$work"
    dict=""
    [ -f "$here/dict/$short.dict" ] && dict="-dict=$here/dict/$short.dict"
    # -max_total_time counts from the start, corpus loading included; leaks and
    # timeouts (10 s for one input) count as crashes.
    # shellcheck disable=SC2086
    "$build/fuzz/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/fuzz-crashes/$short-" $dict \
        "$work" "$here/corpus/$short" >"$logs/$short.log" 2>&1
    echo $? >"$logs/$short.status"
}

start=$(date +%s)
echo "fuzzing $(echo $targets | wc -w) targets, $seconds s each, $jobs at a time (logs: $logs)"
running=0
for name in $targets; do
    run_one "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait
elapsed=$(($(date +%s) - start))

failed=0
printf '\n%-10s %12s %9s %7s %7s %7s  %s\n' target executions exec/s cov ft corpus result
for name in $targets; do
    short=${name#fuzz_}
    log=$logs/$short.log
    status=$(cat "$logs/$short.status" 2>/dev/null || echo 1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    # The last status line ("#N DONE cov: C ft: F corp: U/S ..." or the last pulse).
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1)
    cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p')
    result=ok
    if [ "$status" -ne 0 ]; then
        failed=1
        input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        result="FAILED (status $status; input: ${input:-none}; log: $log)"
    fi
    printf '%-10s %12s %9s %7s %7s %7s  %s\n' "$short" "${execs:-?}" "${rate:-?}" \
        "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
echo "fuzz: $elapsed s in all"
if [ "$failed" -ne 0 ]; then
    for name in $targets; do
        short=${name#fuzz_}
        [ "$(cat "$logs/$short.status")" = 0 ] && continue
        echo "---- $short: the report"
        grep -E -A40 '^==[0-9]+==ERROR|runtime error|^==[0-9]+== ERROR|ALARM|deadly signal' \
            "$logs/$short.log" | head -n 60
    done
    echo "fuzz: a target failed; replay with: $build/fuzz/fuzz_NAME INPUT"
    exit 1
fi
