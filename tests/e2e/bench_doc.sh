#!/bin/sh
# BENCHMARKS.md is what `make bench` writes: tests/bench/BENCHMARKS.in with the
# run's machine and its table put in (bench_write_doc in tests/bench/table.sh, the
# step tests/bench/run.sh ends with). Tested without running the bench (about 8
# minutes): the step on a small table of its own, a template without its
# placeholders refused with the old file kept, and the BENCHMARKS.md in the tree
# being exactly what the step makes of its own run line and table, so the text
# around them is edited in the template, never in the file alone.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
template="$root/tests/bench/BENCHMARKS.in"
BENCH_TABLE="$tmp/table.tsv"
export BENCH_TABLE
. "$root/tests/bench/table.sh"

# ---- the step, on a table of two rows ----
bench_row "import rows/s (rampart rules import)" 101506 34052 2.98 ">= 200000 rows/s"
bench_row "state counts over all rows, ms" 55.4
{ bench_print; echo "(make bench took 3 s; load average at the end: 0.01 0.02 0.03)"; } >"$tmp/t.txt"
bench_write_doc "$template" "2026-01-02, 10 rules; 2 cores" "$tmp/t.txt" "$tmp/B.md" \
    >"$tmp/out" 2>"$tmp/err"
status=$?
check "bench_write_doc writes the file" status_is 0
cp "$tmp/B.md" "$tmp/out" 2>/dev/null
check "... with the run line" grep -qx "Run: 2026-01-02, 10 rules; 2 cores" "$tmp/B.md"
table_of() { # the first ```text block after the Run: line
    awk '/^Run: / { r = 1 } r && /^```text$/ { t = 1; next } t && /^```$/ { exit } t { print }' "$1"
}
table_of "$tmp/B.md" >"$tmp/got"
check "... with the table as printed, in a text block" cmp -s "$tmp/t.txt" "$tmp/got"
check "... and the template's text around them" sh -c \
    'grep -qx "# Benchmarks" "$0" && grep -qx "## Notes" "$0" && ! grep -q "@RUN@\|@TABLE@" "$0"' \
    "$tmp/B.md"

# ---- a broken template: refused, the old file kept ----
grep -vx '@TABLE@' "$template" >"$tmp/broken.in"
echo "the old file" >"$tmp/keep.md"
bench_write_doc "$tmp/broken.in" "x" "$tmp/t.txt" "$tmp/keep.md" >"$tmp/out" 2>"$tmp/err"
status=$?
check "a template without @TABLE@ is refused, the old file kept" sh -c \
    '[ "$0" -ne 0 ] && grep -q "@TABLE@" "$1" && [ "$(cat "$2")" = "the old file" ] && [ ! -e "$2.tmp" ]' \
    "$status" "$tmp/err" "$tmp/keep.md"

# ---- BENCHMARKS.md in the tree: the step's output for its own run and table ----
doc="$root/BENCHMARKS.md"
run_line=$(sed -n 's/^Run: //p' "$doc" | head -n 1)
table_of "$doc" >"$tmp/doc-table.txt"
check "BENCHMARKS.md has a run line and a table" sh -c '[ -n "$0" ] && [ -s "$1" ]' \
    "$run_line" "$tmp/doc-table.txt"
bench_write_doc "$template" "$run_line" "$tmp/doc-table.txt" "$tmp/re.md" >"$tmp/out" 2>"$tmp/err"
diff "$doc" "$tmp/re.md" >"$tmp/out"
check "BENCHMARKS.md is the template with its run and table (edit tests/bench/BENCHMARKS.in)" \
    cmp -s "$doc" "$tmp/re.md"
check "make bench writes it: tests/bench/run.sh ends with bench_write_doc of the template" \
    grep -q 'bench_write_doc "$(dirname "$0")/BENCHMARKS.in"' "$root/tests/bench/run.sh"

# ---- the README sends readers there and holds no table of figures ----
check "README.md links BENCHMARKS.md and has no Performance table" sh -c \
    'grep -q "(BENCHMARKS.md)" "$0" && ! grep -q "^## Performance" "$0" &&
     ! grep -q "^figure  *value  *baseline" "$0"' "$root/README.md"
checks_done
exit 0
