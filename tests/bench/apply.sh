#!/bin/sh
# make bench: `rampart apply` of a 5,000-CIDR list against a cache of 100,000 rules
# in the same policy (figures, not pass/fail). Targets (issue 16): the plan in under
# 1 s; a list with one line changed queues exactly one request; the same list again
# queues none. The list's rules are imported as synced rules the apply owns (remote
# ids, its NAME in their metadata), so the one-line change is the edit in place a
# synced policy gets (one PATCH), not a change to a queued create.
# Baseline: reading the policy's rules with the sqlite3 shell (the same columns).
# usage: tests/bench/apply.sh BUILD_DIR   (rampart inside)
set -eu
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
rules=${BENCH_APPLY_RULES:-100000}
list=${BENCH_APPLY_LIST:-5000}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-apply.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
now() { date +%s.%N; }
P=ipp_benchapply
db="$work/c.db"

# The cache: $rules rules of others (no NAME) in policy P, and the list's $list
# rules, synced and owned by apply "bench".
awk -v n="$rules" -v m="$list" -v p="$P" 'BEGIN {
    printf "[";
    for (i = 0; i < n; i++)
        printf "%s{\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy_id\":\"%s\",\"action\":\"%s\"}",
            (i ? ",\n" : ""), int(i / 65536) % 256, int(i / 256) % 256, i % 256, p,
            (i % 2 ? "allow" : "deny");
    for (i = 0; i < m; i++)
        printf ",\n{\"id\":\"ipr_bench%022d\",\"cidr\":\"172.%d.%d.0/24\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"allow\",\"description\":\"bench\",\"metadata\":\"{\\\"rampart_apply\\\":\\\"bench\\\"}\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
            i, 16 + int(i / 256), i % 256, p;
    print "]" }' >"$work/rules.json"
"$RAMPART" --db "$db" rules import "$work/rules.json" >/dev/null
awk -v m="$list" 'BEGIN { for (i = 0; i < m; i++) printf "172.%d.%d.0/24\n", 16 + int(i / 256), i % 256 }' \
    >"$work/list.txt"
# The same list with one line changed (its last line).
sed '$ s#.*#192.0.2.0/24#' "$work/list.txt" >"$work/list1.txt"

t0=$(now)
"$RAMPART" --db "$db" apply --policy $P --action allow --name bench --dry-run --json \
    "$work/list1.txt" >"$work/plan1.json"
t1=$(now)
sqlite3 "$db" "SELECT id, cidr, description, metadata, action, state FROM rules
               WHERE policy_id = '$P' ORDER BY policy_id, id" >/dev/null
t2=$(now)
"$RAMPART" --db "$db" apply --policy $P --action allow --name bench --json "$work/list1.txt" \
    >"$work/apply1.json"
t3=$(now)
"$RAMPART" --db "$db" apply --policy $P --action allow --name bench --json "$work/list1.txt" \
    >"$work/apply2.json"

# A fresh list of $list entries (all creates) against the same cache: the plan and
# the queueing of $list creates.
awk -v m="$list" 'BEGIN { for (i = 0; i < m; i++) printf "100.%d.%d.0/24\n", 64 + int(i / 256), i % 256 }' \
    >"$work/fresh.txt"
t4=$(now)
"$RAMPART" --db "$db" apply --policy $P --action deny --name fresh "$work/fresh.txt" >/dev/null
t5=$(now)

ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }
requests() { sed -n 's/.*"requests": {"total": \([0-9]*\).*/\1/p' "$1"; }
plan_ms=$(ms "$t0" "$t1")
read_ms=$(ms "$t1" "$t2")
bench_row "apply plan, ms ($list CIDRs, $rules rules)" "$plan_ms" "$read_ms" \
    "$(bench_ratio "$plan_ms" "$read_ms")" "< 1000 ms (baseline: sqlite3 reading the policy's rules)"
bench_row "apply, one line changed: requests queued" "$(requests "$work/apply1.json")" "" "" \
    "exactly 1 (a PATCH: $(sed -n 's/.*"patch": \([0-9]*\).*/\1/p' "$work/apply1.json"))"
bench_row "apply, one line changed: ms" "$(ms "$t2" "$t3")"
bench_row "apply again: requests queued" "$(requests "$work/apply2.json")" "" "" "0"
bench_row "apply of $list new CIDRs (plan + queue), ms" "$(ms "$t4" "$t5")"
bench_done
