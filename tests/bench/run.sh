#!/bin/sh
# make bench: figures, not pass/fail. Each figure is printed with a baseline measured
# in the same run, the ratio, and the target from the issues; the table, with the
# machine it ran on, is written into BENCHMARKS.md (tests/bench/BENCHMARKS.in).
# usage: tests/bench/run.sh BUILD_DIR   (rampart and bench/ binaries inside)
set -eu
build=$(cd "$1" && pwd)
rows=${BENCH_ROWS:-1000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
BENCH_TABLE="$work/table.tsv"
export BENCH_TABLE
. "$(dirname "$0")/table.sh"

now() { date +%s.%N; }
figure() { awk -v f="$1" '$1 == f { print $2 }' "$2"; }

bench_start=$(date +%s)
os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}")
run_info="$(date -u +%Y-%m-%d), $rows rules; $(nproc) cores; $(uname -m)${os:+; $os}; sqlite $(pkg-config --modversion sqlite3); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "make bench: $run_info"

# The import file: distinct /32s over 100 policies, queued creates (no ids).
awk -v n="$rows" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy_id\":\"ipp_bench%05d\",\"action\":\"%s\",\"description\":\"rule %d\"}",
            (i ? ",\n" : ""), int(i / 65536) % 256, int(i / 256) % 256, i % 256, i % 100,
            (i % 2 ? "allow" : "deny"), i;
    print "]" }' >"$work/rules.json"

# Both under maxrss (tests/tools/maxrss.c): the peak RSS of each process.
"$build/tools/maxrss" "$work/baseline.rss" \
    "$build/bench/bench_store" baseline "$rows" "$work/baseline.db" >"$work/baseline.txt"
t0=$(now)
"$build/tools/maxrss" "$work/import.rss" \
    "$build/rampart" --db "$work/import.db" rules import "$work/rules.json" >/dev/null
t1=$(now)
"$build/bench/bench_store" pages "$work/import.db" >"$work/pages.txt"

import_rate=$(awk -v n="$rows" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
base_rate=$(figure baseline_rows_per_s "$work/baseline.txt")
first=$(figure page_first_us "$work/pages.txt")
deep=$(figure page_deep_us "$work/pages.txt")

bench_row "import rows/s (rampart rules import)" "$import_rate" \
    "$base_rate" "$(awk -v a="$import_rate" -v b="$base_rate" 'BEGIN { printf "%.2f", a / b }')" \
    ">= 200000 rows/s (baseline: plain SQLite inserts, same schema)"
import_mib=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/import.rss")
base_mib=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/baseline.rss")
bench_row "import $rows rules: peak RSS MiB" "$import_mib" "$base_mib" \
    "$(bench_ratio "$import_mib" "$base_mib")" \
    "<= 32 MiB (baseline: the plain SQLite inserts' process, 16 MiB cache)"
bench_row "page at 90% depth, us (20 rows)" "$deep" "$first" \
    "$(awk -v a="$deep" -v b="$first" 'BEGIN { printf "%.2f", a / b }')" \
    "ratio <= 1.5 (baseline: first page)"
bench_row "state counts over all rows, ms" "$(figure state_counts_ms "$work/pages.txt")"

# ---- lists for scripts and completion: a few index rows, whatever the size ----
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
t0=$(now)
"$build/rampart" --db "$work/import.db" rules list --limit 20 >/dev/null
t1=$(now)
"$build/rampart" --db "$work/import.db" rules list --limit 20 --sort cidr:desc -o csv >/dev/null
t2=$(now)
"$build/rampart" --version >/dev/null
t3=$(now)
"$build/rampart" --db "$work/import.db" __complete cidr 10.1 >/dev/null
t4=$(now)
bench_row "list --limit 20 --sort cidr:desc -o csv, ms" "$(ms "$t1" "$t2")" "$(ms "$t0" "$t1")" \
    "$(bench_ratio "$(ms "$t1" "$t2")" "$(ms "$t0" "$t1")")" \
    "ratio <= 1.5 (baseline: --limit 20 in id order)"
bench_row "__complete cidr 10.1 (a TAB), ms" "$(ms "$t3" "$t4")" "$(ms "$t2" "$t3")" \
    "$(bench_ratio "$(ms "$t3" "$t4")" "$(ms "$t2" "$t3")")" \
    "< 50 ms (baseline: rampart --version, the process alone)"

# ---- policy decisions (rampart check, the agent's check route) ----
policy_rules=${BENCH_POLICY_RULES:-100000}
"$build/bench/bench_policy" "$policy_rules" >"$work/policy.txt"
"$build/bench/bench_policy" "$rows" >"$work/policy-big.txt"
checks=$(figure checks_per_s "$work/policy.txt")
scan=$(figure scan_checks_per_s "$work/policy.txt")
bench_row "policy checks/s ($policy_rules rules)" "$checks" "$scan" \
    "$(figure ratio "$work/policy.txt")" \
    ">= 2000000 checks/s, one core (baseline: scan of the rules; ratio = value/baseline)"
bench_row "policy checks/s ($policy_rules rules)" "$checks" \
    "$(figure hash_checks_per_s "$work/policy.txt")" "$(figure hash_ratio "$work/policy.txt")" \
    "(stricter baseline: one exact-match hash probe per address, no prefixes)"
bench_row "same, parsing the address text" "$(figure parse_checks_per_s "$work/policy.txt")"
bench_row "policy checks/s ($rows rules)" \
    "$(figure checks_per_s "$work/policy-big.txt")" "$(figure scan_checks_per_s "$work/policy-big.txt")" \
    "$(figure ratio "$work/policy-big.txt")" "(same, a larger index)"
bench_row "policy index MB ($rows rules)" \
    "$(awk '$1 == "index_bytes" { printf "%.1f", $2 / 1048576 }' "$work/policy-big.txt")" \
    "" "" "($(figure index_bytes_per_rule "$work/policy-big.txt") bytes per rule)"
bench_row "policy index build, ms ($rows)" "$(figure build_ms "$work/policy-big.txt")"

# ---- sync over loopback against serve-api: pull and push against one curl ----
sh "$(dirname "$0")/sync.sh" "$build"

# ---- edits in place: an ACL change queued on 1,000 credentials ----
sh "$(dirname "$0")/edit.sh" "$build"

# ---- the look before each write: requests per edit, two admins racing ----
sh "$(dirname "$0")/fresh_look.sh" "$build"

# ---- credential rotation: requests for 100 rotations against the minimum ----
sh "$(dirname "$0")/rotate.sh" "$build"

# ---- apply: a 5,000-CIDR list against 100,000 rules of its policy ----
sh "$(dirname "$0")/apply.sh" "$build"

# ---- impact: 10,000,000 log lines against a 100,000-rule policy ----
sh "$(dirname "$0")/impact.sh" "$build"

# ---- pacing under the account's budget (serve-api: 100 requests per 10 s) ----
sh "$(dirname "$0")/pacing.sh" "$build"

# ---- the agent endpoint: token lookups over loopback TCP against nginx ----
sh "$(dirname "$0")/agent.sh" "$build"

# ---- a fleet: 200 followers through nginx in front of one hub ----
sh "$(dirname "$0")/fleet.sh" "$build"

# ---- the console, over the same 1,000,000-rule cache ----
sh "$(dirname "$0")/ui.sh" "$build" "$work/import.db"

echo
{
    bench_print
    echo "(make bench took $(($(date +%s) - bench_start)) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
} >"$work/table.txt"
cat "$work/table.txt"

# BENCHMARKS.md: the template's text, this run and its table (BENCH_DOC=FILE
# writes another file; BENCH_DOC= none).
doc=${BENCH_DOC-$(cd "$(dirname "$0")/../.." && pwd)/BENCHMARKS.md}
if [ -n "$doc" ]; then
    bench_write_doc "$(dirname "$0")/BENCHMARKS.in" "$run_info" "$work/table.txt" "$doc"
    echo "wrote $doc"
fi
