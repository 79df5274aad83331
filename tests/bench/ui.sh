#!/bin/sh
# The console's figures (make bench runs this; figures, not pass/fail):
# - headless over a 1,000,000-rule cache: PgDn 10,000 times, median time per page
#   (target < 1 ms) and peak RSS (target <= 32 MiB and <= 1.2x the RSS over 1,000
#   rules, same script);
# - PgDn in every sort order at that size (each walks an index: target < 5 ms), and
#   the peak RSS of each run;
# - bytes written to a real terminal (tmux, 80x24) for one cursor move and one
#   PgDn (targets <= 64 and <= 2,500 bytes).
# usage: tests/bench/ui.sh BUILD_DIR [CACHE_DB]   (CACHE_DB: reuse a cache of rules;
#        otherwise one of $BENCH_ROWS rules, default 1,000,000, is imported here)
set -eu
build=$(cd "$1" && pwd)
RAMPART="$build/rampart"
rows=${BENCH_ROWS:-1000000}
pages=${BENCH_UI_PAGES:-10000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-ui.XXXXXX")
. "$(dirname "$0")/../tui/lib.sh" # tui_cache, and tmux on a socket in $tmp
. "$(dirname "$0")/table.sh"

big=${2:-}
if [ -z "$big" ]; then
    big="$tmp/big.db"
    tui_cache "$rows" "$big" 100
fi
small="$tmp/small.db"
tui_cache 1000 "$small" 100

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# headless DB NAME SCRIPT...: run the lines as a script; per-key times in $tmp/NAME.t
headless() {
    db=$1
    name=$2
    shift 2
    printf '%s\n' "$@" >"$tmp/$name.keys"
    RAMPART_UI_TIMING="$tmp/$name.t" "$RAMPART" --db "$db" tui --no-agent \
        --headless "$tmp/$name.keys" >/dev/null
}
key_median() { awk '$1 == "key_us" { print $2 }' "$tmp/$1.t" | tail -n "+${2:-1}" | median; }
rss_kb() { awk '$1 == "vmhwm_kb" { print $2 }' "$tmp/$1.t"; }

headless "$big" big "repeat $pages key <PgDn>" dump
headless "$small" small "repeat $pages key <PgDn>" dump
big_ms=$(key_median big | awk '{ printf "%.3f", $1 / 1000 }')
small_ms=$(key_median small | awk '{ printf "%.3f", $1 / 1000 }')
big_rss=$(rss_kb big)
small_rss=$(rss_kb small)

big_rows=$("$RAMPART" --db "$big" status --json | sed -n 's/.*"rules": {[^}]*"total": \([0-9]*\)}.*/\1/p')
bench_row "console PgDn median, ms ($big_rows rules)" "$big_ms" "$small_ms" \
    "$(awk -v a="$big_ms" -v b="$small_ms" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
    "< 1 ms (baseline: 1,000 rules)"
bench_row "console peak RSS, MiB ($big_rows rules)" \
    "$(awk -v a="$big_rss" 'BEGIN { printf "%.1f", a / 1024 }')" \
    "$(awk -v a="$small_rss" 'BEGIN { printf "%.1f", a / 1024 }')" \
    "$(awk -v a="$big_rss" -v b="$small_rss" 'BEGIN { printf "%.2f", a / b }')" \
    "<= 32 MiB and ratio <= 1.2 (baseline: 1,000 rules)"

# One page in each order: the sort's first page, then 20 PgDn (median of those).
for sort in id policy cidr action state; do
    headless "$big" "sort-$sort" "key :" "type sort $sort" "key <Enter>" "repeat 20 key <PgDn>"
    # Keys: ':' + "sort X" typed + Enter (the first page), then the PgDn.
    typed=$((1 + ${#sort} + 5 + 1))
    first=$(awk '$1 == "key_us" { print $2 }' "$tmp/sort-$sort.t" | sed -n "${typed}p" |
        awk '{ printf "%.1f", $1 / 1000 }')
    per=$(key_median "sort-$sort" $((typed + 1)) | awk '{ printf "%.3f", $1 / 1000 }')
    rss=$(rss_kb "sort-$sort" | awk '{ printf "%.1f", $1 / 1024 }')
    bench_row "console sorted by $sort, ms per PgDn" "$per" "" "" \
        "< 5 ms (first page $first ms; peak RSS $rss MiB)"
done

# ---- bytes to a real terminal ----
if ! command -v tmux >/dev/null 2>&1; then
    echo "bytes per key: skipped (no tmux)"
    bench_done
    exit 0
fi
line_starts() { tui_capture | sed -n "${1}p" | grep -q "^$2"; }
size_of() { wc -c <"$1" | tr -d ' '; }
settled() { # FILE: its size stopped moving for 0.2 s
    a=$(size_of "$1")
    sleep 0.2
    [ "$a" = "$(size_of "$1")" ]
}
measure() { # NAME KEY CONDITION...: bytes the console writes for KEY
    out="$tmp/bytes-$1"
    : >"$out"
    tui_pipe "$out"
    key=$2
    shift 2
    tui_keys "$key"
    tui_poll 20 "$@" || echo "bytes: timed out waiting for: $*" >&2
    tui_poll 20 settled "$out" || echo "bytes: the output did not settle" >&2
    tui_pipe_stop
    size_of "$out"
}
tui_start 80x24 xterm-256color "LANG=C.UTF-8 '$RAMPART' --db '$big' tui --no-agent"
tui_poll 20 tui_has "rows 1-20 of" || echo "bytes: the console did not start" >&2
move=$(measure move j line_starts 5 "▶")
pgdn=$(measure pgdn PageDown tui_has "rows 21-40 of")
tui_stop
bench_row "console bytes to the terminal, cursor move" "$move" "" "" "<= 64 (80x24, tmux pipe-pane)"
bench_row "console bytes to the terminal, one PgDn" "$pgdn" "" "" "<= 2,500 (80x24, tmux pipe-pane)"
bench_done
