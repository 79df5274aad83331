# Sourced by the bench scripts: every figure is one row of one table (figure, value,
# baseline measured in the same run, ratio, target). run.sh collects the rows of all
# scripts through $BENCH_TABLE and prints the table once at the end; a script run on
# its own prints its own rows.
bench_table=${BENCH_TABLE:-}
bench_own_table=""
if [ -z "$bench_table" ]; then
    bench_table=$(mktemp "${TMPDIR:-/tmp}/rampart-bench-table.XXXXXX")
    bench_own_table=1
fi

# bench_row FIGURE VALUE [BASELINE [RATIO [TARGET]]]
bench_row() {
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "${3:-}" "${4:-}" "${5:-}" >>"$bench_table"
}

# bench_ratio A B: A / B with two decimals ("" when B is 0 or empty).
bench_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 != 0) printf "%.2f", a / b }'
}

bench_print() {
    awk -F '\t' 'BEGIN { printf "%-46s %12s %12s %8s  %s\n", "figure", "value", "baseline",
                         "ratio", "target (baseline)" }
                 { printf "%-46s %12s %12s %8s  %s\n", $1, $2, $3, $4, $5 }' "$bench_table"
}

# For scripts run on their own: print the rows and remove the file.
bench_done() {
    if [ -n "$bench_own_table" ]; then
        bench_print
        rm -f "$bench_table"
    fi
}

# bench_write_doc TEMPLATE RUN TABLE OUT: OUT (BENCHMARKS.md) from TEMPLATE
# (tests/bench/BENCHMARKS.in), its line @RUN@ becoming "Run: RUN" (the machine
# and the run) and its line @TABLE@ the text of the file TABLE (the table as
# printed). Written beside OUT and renamed over it: a failure leaves OUT as it was.
bench_write_doc() {
    if [ "$(grep -cx '@RUN@' "$1")" != 1 ] || [ "$(grep -cx '@TABLE@' "$1")" != 1 ] ||
        [ ! -r "$3" ]; then
        echo "bench: $1 needs one @RUN@ and one @TABLE@ line, and $3 the table" >&2
        return 1
    fi
    bench_run="Run: $2" awk -v table="$3" '
        $0 == "@RUN@" { print ENVIRON["bench_run"]; next }
        $0 == "@TABLE@" { while ((getline line < table) > 0) print line; next }
        { print }' "$1" >"$4.tmp" && mv "$4.tmp" "$4" || { rm -f "$4.tmp"; return 1; }
}
