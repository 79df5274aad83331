#!/bin/sh
# The console's figures (make bench runs this; figures, not pass/fail):
# - headless over a 1,000,000-rule cache: PgDn 10,000 times, median time per page
#   (target < 1 ms) and peak RSS (target <= 32 MiB and <= 1.2x the RSS over 1,000
#   rules, same script);
# - one page in every sort order at that size (which orders an index serves);
# - bytes written to a real terminal (tmux, 80x24) for one cursor move and one
#   PgDn (targets <= 64 and <= 2,500 bytes).
# usage: tests/bench/ui.sh BUILD_DIR [CACHE_DB]   (CACHE_DB: reuse a cache of rules;
#        otherwise one of $BENCH_ROWS rules, default 1,000,000, is imported here)
set -eu
build=$(cd "$1" && pwd)
rampart="$build/rampart"
rows=${BENCH_ROWS:-1000000}
pages=${BENCH_UI_PAGES:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-ui.XXXXXX")
tmux_sock="$work/tmux.sock"
cleanup() {
    tmux -S "$tmux_sock" kill-server 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

make_cache() { # N DB: N queued rules over 100 policies, through `rules import`
    awk -v n="$1" 'BEGIN {
        printf "[";
        for (i = 0; i < n; i++)
            printf "%s{\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy_id\":\"ipp_bench%05d\",\"action\":\"%s\",\"description\":\"rule %d\"}",
                (i ? ",\n" : ""), int(i / 65536) % 256, int(i / 256) % 256, i % 256, i % 100,
                (i % 2 ? "allow" : "deny"), i;
        print "]" }' >"$work/rules-$1.json"
    "$rampart" --db "$2" rules import "$work/rules-$1.json" >/dev/null
    rm -f "$work/rules-$1.json"
}

big=${2:-}
if [ -z "$big" ]; then
    big="$work/big.db"
    make_cache "$rows" "$big"
fi
small="$work/small.db"
make_cache 1000 "$small"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# headless DB NAME SCRIPT...: run the lines as a script; per-key times in $work/NAME.t
headless() {
    db=$1
    name=$2
    shift 2
    printf '%s\n' "$@" >"$work/$name.keys"
    RAMPART_UI_TIMING="$work/$name.t" "$rampart" --db "$db" tui --no-agent \
        --headless "$work/$name.keys" >/dev/null
}
key_median() { awk '$1 == "key_us" { print $2 }' "$work/$1.t" | tail -n "+${2:-1}" | median; }
rss_kb() { awk '$1 == "vmhwm_kb" { print $2 }' "$work/$1.t"; }

headless "$big" big "repeat $pages key <PgDn>" dump
headless "$small" small "repeat $pages key <PgDn>" dump
big_ms=$(key_median big | awk '{ printf "%.3f", $1 / 1000 }')
small_ms=$(key_median small | awk '{ printf "%.3f", $1 / 1000 }')
big_rss=$(rss_kb big)
small_rss=$(rss_kb small)

big_rows=$("$rampart" --db "$big" status --json | sed -n 's/.*"rules": {[^}]*"total": \([0-9]*\)}.*/\1/p')
printf '\nconsole (headless, 80x24, %s PgDn)\n' "$pages"
printf '%-34s %14s %14s %7s  %s\n' figure value baseline ratio target
printf '%-34s %14s %14s %7s  %s\n' "PgDn median, ms ($big_rows rules)" "$big_ms" "$small_ms" \
    "$(awk -v a="$big_ms" -v b="$small_ms" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
    "< 1 ms (baseline: 1,000 rules)"
printf '%-34s %14s %14s %7s  %s\n' "peak RSS, MiB" \
    "$(awk -v a="$big_rss" 'BEGIN { printf "%.1f", a / 1024 }')" \
    "$(awk -v a="$small_rss" 'BEGIN { printf "%.1f", a / 1024 }')" \
    "$(awk -v a="$big_rss" -v b="$small_rss" 'BEGIN { printf "%.2f", a / b }')" \
    "<= 32 MiB and ratio <= 1.2 (baseline: 1,000 rules)"

# One page in each order: the sort's first page, then 20 PgDn (median of those).
printf '\n%-34s %14s %14s  %s\n' "rules sorted by (PgDn median)" "ms/page" "first, ms" "index"
for sort in id policy cidr action state; do
    headless "$big" "sort-$sort" "key :" "type sort $sort" "key <Enter>" "repeat 20 key <PgDn>"
    # Keys: ':' + "sort X" typed + Enter (the first page), then the PgDn.
    typed=$((1 + ${#sort} + 5 + 1))
    first=$(awk '$1 == "key_us" { print $2 }' "$work/sort-$sort.t" | sed -n "${typed}p" |
        awk '{ printf "%.1f", $1 / 1000 }')
    per=$(key_median "sort-$sort" $((typed + 1)) | awk '{ printf "%.3f", $1 / 1000 }')
    case $sort in id | policy) idx="yes" ;; *) idx="no (sorts each page)" ;; esac
    printf '%-34s %14s %14s  %s\n' "  $sort" "$per" "$first" "$idx"
done

# ---- bytes to a real terminal ----
if ! command -v tmux >/dev/null 2>&1; then
    echo "bytes per key: skipped (no tmux)"
    exit 0
fi
tmx() { tmux -S "$tmux_sock" -f /dev/null "$@"; }
screen_has() { tmx capture-pane -p -t bench 2>/dev/null | grep -F -q -- "$1"; }
line_starts() { tmx capture-pane -p -t bench 2>/dev/null | sed -n "${1}p" | grep -q "^$2"; }
wait_for() { # CONDITION...: poll up to 20 s
    n=0
    until "$@"; do
        n=$((n + 1))
        [ $n -lt 400 ] || { echo "bytes: timed out waiting for: $*"; return 1; }
        sleep 0.05
    done
}
size_of() { wc -c <"$1" | tr -d ' '; }
settled() { # FILE: its size stopped moving for 0.2 s
    a=$(size_of "$1")
    sleep 0.2
    [ "$a" = "$(size_of "$1")" ]
}
measure() { # NAME KEY CONDITION...: bytes the console writes for KEY
    out="$work/bytes-$1"
    : >"$out"
    tmx pipe-pane -t bench -o "cat >>'$out'"
    name=$1
    key=$2
    shift 2
    tmx send-keys -t bench "$key"
    wait_for "$@"
    wait_for settled "$out"
    tmx pipe-pane -t bench
    echo "$(size_of "$out")"
}
tmx new-session -d -s bench -x 80 -y 24 \
    "env TERM=xterm-256color LANG=C.UTF-8 '$rampart' --db '$big' tui --no-agent"
tmx set-option -g status off >/dev/null
wait_for screen_has "rows 1-20 of"
move=$(measure move j line_starts 5 "▶")
pgdn=$(measure pgdn PageDown screen_has "rows 21-40 of")
tmx kill-server
printf '\n%-34s %14s  %s\n' "bytes to the terminal (80x24)" "bytes" "target"
printf '%-34s %14s  %s\n' "  one cursor move (j)" "$move" "<= 64"
printf '%-34s %14s  %s\n' "  one PgDn" "$pgdn" "<= 2,500"
