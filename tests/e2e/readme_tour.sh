#!/bin/sh
# README.md's "A short tour", run as written: its commands are read from the
# README's code block and run in order, in one shell (so a variable one line sets
# is there for the next), as a newcomer would: a fresh HOME with no account (no
# RAMPART_* variable, no config file), `rampart` being the binary under test.
# Each command must exit 0, except one followed by a `#   rampart: MESSAGE`
# comment line: it must fail, with exactly that line on standard error.
# `rampart rules import` of what `rampart rules export` just wrote, into the same
# cache, is part of it: a no-op, never an error.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
readme="$here/../../README.md"

# The tour's code block: from the first ```sh after "## A short tour" to its ```.
awk '/^## A short tour/ { t = 1; next }
     t && /^```sh/ { b = 1; next }
     b && /^```/ { exit }
     b { print }' "$readme" >"$tmp/block"

# The block as a script of steps: one step per command (continued lines joined),
# each run in a { } group (a group, not a subshell: assignments and aliases stay)
# with its output kept, then checked. Comment lines are skipped, but a
# `#   rampart: ...` right after a command is the failure that command expects.
mkdir -p "$tmp/steps"
awk -v dir="$tmp/steps" '
    function flush() {
        if (cmd == "") return
        n++
        printf "%s\n", cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
        printf "%s", expect > (dir "/" n ".expect"); close(dir "/" n ".expect")
        printf "{ %s\n} >\"$tour_dir/%d.out\" 2>\"$tour_dir/%d.err\"\n", cmd, n, n
        printf "tour_step %d $?\n", n
        cmd = ""; expect = ""
    }
    cont { cmd = cmd "\n" $0; cont = /\\$/; next }
    /^#   rampart: / && cmd != "" { expect = substr($0, 5); flush(); next }
    /^[[:space:]]*(#|$)/ { flush(); next }
    { flush(); cmd = $0; cont = /\\$/ }
    END { flush() }' "$tmp/block" >"$tmp/steps.sh"
steps=$(ls "$tmp/steps" | grep -c '[.]cmd$')
cp "$tmp/block" "$tmp/out"
# This check, a line per step (printed by the tour's own shell) and the last check.
plan $((steps + 2))
check "the README's tour found: $steps commands" [ "$steps" -ge 10 ]

# No account: no RAMPART_* setting from the caller (lib.sh made HOME and the XDG
# directories fresh, so there is no config file and no cache either).
for v in $(env | sed -n 's/^\(RAMPART_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
mkdir -p "$tmp/bin" "$tmp/work"
ln -s "$RAMPART" "$tmp/bin/rampart"

cat >"$tmp/tour.sh" <<'EOF'
# tour_step N STATUS: one test line for step N, from its status and stderr.
tour_step() {
    first=$(head -n 1 "$tour_dir/$1.cmd" | sed 's/  *# .*//')
    expect=$(cat "$tour_dir/$1.expect")
    if [ -z "$expect" ] && [ "$2" -eq 0 ]; then
        echo "ok - tour $1: $first"
    elif [ -n "$expect" ] && [ "$2" -ne 0 ] && grep -qxF -e "$expect" "$tour_dir/$1.err"; then
        echo "ok - tour $1: $first  (fails as shown: $expect)"
    else
        echo "not ok - tour $1: $first"
        echo "#   status $2, expected ${expect:+failure: }${expect:-0}; stdout:"
        sed 's/^/#     /' "$tour_dir/$1.out" | head -n 15
        echo "#   stderr:"
        sed 's/^/#     /' "$tour_dir/$1.err" | head -n 15
    fi
}
EOF
cat "$tmp/steps.sh" >>"$tmp/tour.sh"
(
    cd "$tmp/work" || exit 1
    # A tour that waited for input or never ended would stall make test.
    PATH="$tmp/bin:$PATH" tour_dir="$tmp/steps" timeout 300 sh "$tmp/tour.sh" </dev/null ||
        echo "not ok - the tour stopped: status $?"
)
cd "$tmp" || exit 1
no_server() { ! pgrep -f "$XDG_DATA_HOME/rampart/sandbox/remote.db" >/dev/null; }
check "no sandbox server is left running after the tour" no_server
checks_done
exit 0
