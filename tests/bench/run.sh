#!/bin/sh
# make bench: figures, not pass/fail. Each figure is printed with a baseline measured
# in the same run, the ratio, and the target from the issues.
# usage: tests/bench/run.sh BUILD_DIR   (rampart and bench/ binaries inside)
set -eu
build=$(cd "$1" && pwd)
rows=${BENCH_ROWS:-1000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

now() { date +%s.%N; }
figure() { awk -v f="$1" '$1 == f { print $2 }' "$2"; }

echo "make bench: $rows rules; $(nproc) cores; $(uname -m); sqlite $(pkg-config --modversion sqlite3)"

# The import file: distinct /32s over 100 policies, queued creates (no ids).
awk -v n="$rows" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy_id\":\"ipp_bench%05d\",\"action\":\"%s\",\"description\":\"rule %d\"}",
            (i ? ",\n" : ""), int(i / 65536) % 256, int(i / 256) % 256, i % 256, i % 100,
            (i % 2 ? "allow" : "deny"), i;
    print "]" }' >"$work/rules.json"

"$build/bench/bench_store" baseline "$rows" "$work/baseline.db" >"$work/baseline.txt"
t0=$(now)
"$build/rampart" --db "$work/import.db" rules import "$work/rules.json" >/dev/null
t1=$(now)
"$build/bench/bench_store" pages "$work/import.db" >"$work/pages.txt"

import_rate=$(awk -v n="$rows" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
base_rate=$(figure baseline_rows_per_s "$work/baseline.txt")
first=$(figure page_first_us "$work/pages.txt")
deep=$(figure page_deep_us "$work/pages.txt")

printf '\n%-34s %14s %14s %7s  %s\n' figure value baseline ratio target
printf '%-34s %14s %14s %7s  %s\n' "import rows/s (rampart rules import)" "$import_rate" \
    "$base_rate" "$(awk -v a="$import_rate" -v b="$base_rate" 'BEGIN { printf "%.2f", a / b }')" \
    ">= 200000 rows/s (baseline: plain SQLite inserts, same schema)"
printf '%-34s %14s %14s %7s  %s\n' "page at 90% depth, us (20 rows)" "$deep" "$first" \
    "$(awk -v a="$deep" -v b="$first" 'BEGIN { printf "%.2f", a / b }')" \
    "ratio <= 1.5 (baseline: first page)"
printf '%-34s %14s\n' "state counts over all rows, ms" "$(figure state_counts_ms "$work/pages.txt")"
