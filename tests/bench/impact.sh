#!/bin/sh
# make bench: `rampart plan --impact` over 10,000,000 combined-format lines (about
# 1 GB, generated) from 100,000 distinct addresses, against a policy of 100,000
# synced rules with a few queued deny creates (figures, not pass/fail). Targets
# (issue 31): at least 2,000,000 lines/s on one core; peak RSS at most 1.3x that
# of `rampart check` on the same policy; and, in the same run, the time of the
# baseline an admin would type, `awk '{print $1}' LOG | sort -u`, over the file.
# usage: tests/bench/impact.sh BUILD_DIR   (rampart and tools/maxrss inside)
set -eu
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
lines=${BENCH_IMPACT_LINES:-10000000}
addrs=${BENCH_IMPACT_ADDRESSES:-100000}
rules=${BENCH_IMPACT_RULES:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-impact.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
now() { date +%s.%N; }
P=ipp_benchimpact
db="$work/c.db"

# The policy: rule i allows the /24 (11 + i/65536).(i/256 % 256).(i % 256).0,
# synced (a remote id); then four deny creates queued over the first /16s.
awk -v n="$rules" -v p="$P" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"id\":\"ipr_bench%022d\",\"cidr\":\"%d.%d.%d.0/24\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"allow\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            (i ? ",\n" : ""), i, 11 + int(i / 65536), int(i / 256) % 256, i % 256, p;
    print "]" }' >"$work/rules.json"
"$RAMPART" --db "$db" rules import "$work/rules.json" >/dev/null
for c in 11.0.0.0/16 11.1.0.0/16 11.2.0.0/16 12.0.0.0/16; do
    "$RAMPART" --db "$db" rules create --policy $P --action deny --cidr $c >/dev/null
done

# The log: line k comes from address k % addrs, each inside its rule's /24;
# times one second apart per 116 lines (a day's traffic).
awk -v n="$lines" -v m="$addrs" 'BEGIN {
    for (j = 0; j < m; j++)
        a[j] = sprintf("%d.%d.%d.%d", 11 + int(j / 65536), int(j / 256) % 256, j % 256, 1 + j % 250);
    for (s = 0; s < 86400; s++)
        t[s] = sprintf("[28/Nov/2026:%02d:%02d:%02d +0000]", int(s / 3600), int(s / 60) % 60, s % 60);
    for (k = 0; k < n; k++)
        printf "%s - - %s \"GET /item?id=%d HTTP/1.1\" 200 5123 \"-\" \"Mozilla/5.0 (X11)\"\n",
            a[k % m], t[int(k / 116) % 86400], k % 9973;
}' >"$work/access.log"
size_mb=$(du -m "$work/access.log" | cut -f1)

# CPU seconds of the children so far (user + sys), from what the shell's `times`
# wrote (run at the top level: in a subshell the children would be its own).
cpu() {
    awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]);
         t += p[1] * 60 + p[2] } printf "%.3f", t }' "$1"
}
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
times >"$work/cpu0"
t0=$(now)
"$build/tools/maxrss" "$work/impact.rss" \
    "$RAMPART" --db "$db" plan --policy $P --impact "$work/access.log" -o csv >"$work/out.csv"
t1=$(now)
times >"$work/cpu1"
awk '{print $1}' "$work/access.log" | sort -u >"$work/sorted.txt"
t2=$(now)
times >"$work/cpu2"
c0=$(cpu "$work/cpu0") c1=$(cpu "$work/cpu1") c2=$(cpu "$work/cpu2")
# check on the same policy: with more addresses than its few-address path takes
# (16), it loads the whole policy, as the impact must; with one, only the rules
# that hold it (shown beside, for scale).
"$build/tools/maxrss" "$work/check.rss" \
    "$RAMPART" --db "$db" check $P $(seq -f "11.0.%g.1" 1 20) >/dev/null || true # denied
"$build/tools/maxrss" "$work/check1.rss" \
    "$RAMPART" --db "$db" check $P 11.0.0.1 >/dev/null || true # exit 1: denied
"$build/tools/maxrss" "$work/plan.rss" "$RAMPART" --db "$db" plan >/dev/null
flipped=$(($(wc -l <"$work/out.csv") - 1))
distinct=$(wc -l <"$work/sorted.txt")

per_s() { awk -v n="$lines" -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", n / (b - a) }'; }
rate=$(per_s "$c0" "$c1")
base_rate=$(per_s "$c1" "$c2")
bench_row "plan --impact lines/s, CPU ($lines lines, $size_mb MB)" "$rate" "$base_rate" \
    "$(bench_ratio "$rate" "$base_rate")" \
    ">= 2000000 lines/s, one core (baseline: awk '{print \$1}' | sort -u, same file)"
wall=$(per_s "$t0" "$t1")
base_wall=$(per_s "$t1" "$t2")
bench_row "plan --impact lines/s, wall (load $load)" "$wall" "$base_wall" \
    "$(bench_ratio "$wall" "$base_wall")" \
    "($distinct distinct addresses, $flipped flipped, $rules rules)"
impact_mib=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/impact.rss")
check_mib=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/check.rss")
plan_mib=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/plan.rss")
check1_mib=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/check1.rss")
bench_row "plan --impact peak RSS MiB" "$impact_mib" "$check_mib" \
    "$(bench_ratio "$impact_mib" "$check_mib")" \
    "ratio <= 1.3 (baseline: rampart check on the same policy, loaded whole: 20 addresses)"
bench_row "plan --impact peak RSS MiB, vs check of one address" "$impact_mib" "$check1_mib" \
    "$(bench_ratio "$impact_mib" "$check1_mib")" \
    "(baseline: check reading only the rules that hold the address)"
bench_row "plan --impact peak RSS MiB, vs plan alone" "$impact_mib" "$plan_mib" \
    "$(bench_ratio "$impact_mib" "$plan_mib")" \
    "(baseline: rampart plan without --impact, same cache)"
bench_done
