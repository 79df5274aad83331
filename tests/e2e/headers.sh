#!/bin/sh
# A header's comments are contracts, short: no comment block in a header of the
# product (include/, src/, sync/, ui/) is longer than 25 lines, the top one
# included. Reasoning and measurements belong in DESIGN.md. Every header is
# found by walking the folders, so a new one is held to the same limit.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
max=25
plan 2

find "$root/include" "$root/src" "$root/sync" "$root/ui" -name '*.h' -type f \
    | sort >"$tmp/headers"
n=$(wc -l <"$tmp/headers")
if [ "$n" -ge 30 ]; then
    pass "headers found ($n)"
else
    fail "headers found: only $n under include/ src/ sync/ ui/"
fi

# Each block from its "/*" to its "*/", indented or not; prints FILE:LINE: N
# for every block longer than $max lines.
# shellcheck disable=SC2046
awk -v max="$max" '
    FNR == 1 { inb = 0 }
    !inb && /\/\*/ { inb = 1; n = 0; start = FNR; sub(/.*\/\*/, "") }
    inb { n++ }
    inb && /\*\// { if (n > max) printf "%s:%d: %d lines\n", FILENAME, start, n; inb = 0 }
' $(cat "$tmp/headers") | sed "s|^$root/||" >"$tmp/long"
if [ ! -s "$tmp/long" ]; then
    pass "no header comment block longer than $max lines"
else
    fail "header comment blocks longer than $max lines (a contract is short: move the rest to DESIGN.md)"
    sed 's/^/    /' "$tmp/long"
fi

checks_done
