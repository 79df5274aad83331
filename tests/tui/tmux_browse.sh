#!/bin/sh
# The real binary in tmux: browse 10,000 rules page by page, filter, switch views,
# resize, too small, several terminal types, NO_COLOR; quitting (q, SIGTERM, SIGINT)
# gives the terminal back as it was.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

if ! command -v tmux >/dev/null 2>&1; then
    fail "tmux is not installed (make deps installs it)"
    exit 1
fi

db="$tmp/cache.db"
tui_cache 10000 "$db" || fail "import"

# The console inside a shell that reports, once it ends, its exit status and
# whether the terminal modes are what they were before. Every byte it writes goes
# to $tmp/bytes (the pipe is attached before the console starts).
console() { # SIZE TERM [VAR=VALUE...] [--tui-option...]
    rm -f "$tmp/console.pid" "$tmp/go"
    size=$1
    term=$2
    shift 2
    envs=""
    args=""
    for a in "$@"; do
        case $a in
        --*) args="$args $a" ;;
        *) envs="$envs $a" ;;
        esac
    done
    : >"$tmp/bytes"
    cat >"$tmp/wrap.sh" <<EOF
trap 'true' INT TERM QUIT
before=\$(stty -g)
n=0
while [ ! -f "$tmp/go" ] && [ \$n -lt 200 ]; do sleep 0.05; n=\$((n + 1)); done
sh -c 'echo \$\$ >"\$0"; exec "\$@"' "$tmp/console.pid" env $envs "$RAMPART" --db "$db" tui --no-agent $args
code=\$?
[ "\$(stty -g)" = "\$before" ] && echo "TTY-RESTORED" || echo "TTY-CHANGED"
echo "EXIT=\$code"
EOF
    tui_start "$size" "$term" "sh $tmp/wrap.sh"
    tui_pipe "$tmp/bytes"
    : >"$tmp/go"
}

esc=$(printf '\033')
# What the console wrote to the terminal ($tmp/bytes):
high_bytes() { LC_ALL=C grep -a -q -P '[\x80-\xff]' "$tmp/bytes"; }
# a colour in an SGR sequence (30-49: foreground and background, 256 colours too)
coloured() {
    grep -a -o "${esc}\[[0-9;]*m" "$tmp/bytes" | grep -q -E '[[;](3[0-9]|4[0-9])(;|m)'
}
ascii_only() { ! high_bytes; }
colourless() { ! coloured; }
# the cursor shown again (the last cursor switch is "show") and the normal
# screen back
cursor_back() {
    [ "$(grep -a -o "${esc}\[?25[hl]" "$tmp/bytes" | tail -n 1)" = "${esc}[?25h" ] &&
        grep -a -q "${esc}\[?1049l" "$tmp/bytes"
}

# ---- browsing at 80x24, xterm-256color, UTF-8 ----
console 80x24 xterm-256color LANG=C.UTF-8
check "80x24: first page" tui_wait "rows 1-20 of 10,000  page 1/500"
check "80x24: rows drawn" tui_wait "10.0.0.19/32"
check "80x24: UTF-8 cursor" tui_wait "▶ local_"
i=1
while [ $i -le 5 ]; do
    tui_keys PageDown
    i=$((i + 1))
done
check "80x24: PgDn x5" tui_wait "rows 101-120 of 10,000  page 6/500"
check "80x24: page 6 rows" tui_wait "10.0.0.100/32"
tui_keys PageUp
check "80x24: PgUp" tui_wait "page 5/500"
tui_keys G
check "80x24: G" tui_wait "rows 9,981-10,000 of 10,000  page 500/500"
check "80x24: last row" tui_wait "10.0.39.15/32"
tui_keys g
check "80x24: g" tui_wait "rows 1-20 of 10,000  page 1/500"
tui_keys C-d
check "80x24: Ctrl-D half a page" tui_wait "rows 11-30 of 10,000"
tui_keys C-u
check "80x24: Ctrl-U" tui_wait "rows 1-20 of 10,000  page 1/500"
tui_keys /
tui_type "10.0.39.1"
check "80x24: live filter" tui_wait "rows 1-7 of 7"
tui_keys Enter
check "80x24: filter kept" tui_wait 'filter "10.0.39.1"'
tui_keys Escape
check "80x24: Esc clears the filter" tui_wait "rows 1-20 of 10,000"
tui_keys 2
check "80x24: credentials view" tui_wait "[2 Creds]"
tui_keys Tab
check "80x24: pending view" tui_wait "[3 Pending]"
check "80x24: plan rows" tui_wait "+ rule"
tui_keys : && tui_type "log" && tui_keys Enter
check "80x24: :log" tui_wait "[4 Log]"
tui_keys 1 ?
check "80x24: help" tui_wait "Keys of the Rules view"
tui_keys q
check "80x24: help closes" tui_wait_gone "Keys of the Rules view"

# ---- resize: bigger, too small, back ----
tui_resize 100x30
check "resize 100x30: more rows" tui_wait "rows 1-26 of 10,000"
tui_resize 59x20
check "resize 59x20: too small" tui_wait "terminal too small: need 60x14 (now 59x20)"
tui_resize 80x24
check "resize 80x24: drawn again" tui_wait "rows 1-20 of 10,000  page 1/500"
tui_keys q
check "80x24: q goes back to the view left last" tui_wait "[4 Log]"
tui_keys q q q
check "80x24: q quits once there is nothing to go back to" tui_wait "EXIT=0"
check "80x24: terminal restored" tui_wait "TTY-RESTORED"
check "80x24: cursor shown again" cursor_back
check "80x24 (UTF-8, colours): UTF-8 was written" high_bytes
check "80x24 (UTF-8, colours): colours were written" coloured

# ---- too small from the start ----
console 59x20 xterm-256color LANG=C.UTF-8
check "59x20: too small at start" tui_wait "terminal too small: need 60x14 (now 59x20)"
tui_resize 80x24
check "59x20 -> 80x24: drawn" tui_wait "rows 1-20 of 10,000"
tui_keys q
check "60x20: quits" tui_wait "EXIT=0"

# ---- terminal types, NO_COLOR, and the other ways out ----
for term in screen-256color tmux-256color linux vt100; do
    console 80x24 "$term" LANG=C.UTF-8
    check "$term: first page" tui_wait "rows 1-20 of 10,000  page 1/500"
    tui_keys PageDown PageDown
    check "$term: PgDn" tui_wait "rows 41-60 of 10,000  page 3/500"
    check "$term: rows" tui_wait "10.0.0.59/32"
    tui_keys End
    check "$term: End" tui_wait "page 500/500"
    tui_keys Home
    check "$term: Home" tui_wait "rows 1-20 of 10,000  page 1/500"
    tui_keys Q
    check "$term: Q quits" tui_wait "EXIT=0"
    check "$term: terminal restored" tui_wait "TTY-RESTORED"
done

console 80x24 xterm-256color NO_COLOR=1 LANG=C
check "NO_COLOR, C locale: drawn in ASCII" tui_wait "> local_"
tui_keys Space
check "NO_COLOR: mark visible without colour" tui_wait "1 marked"
check "NO_COLOR: '*' in the gutter" tui_wait " *local_"
tui_keys C-c
check "SIGINT (C-c): exits 130" tui_wait "EXIT=130"
check "SIGINT: terminal restored" tui_wait "TTY-RESTORED"
check "SIGINT: cursor shown again" cursor_back
check "C locale: not one byte above ASCII written" ascii_only
check "NO_COLOR: no colour written" colourless

console 80x24 xterm-256color LANG=C.UTF-8 --ascii --no-color
check "--ascii: drawn in ASCII in a UTF-8 locale" tui_wait "> local_"
tui_keys G
check "--ascii: still browsing" tui_wait "page 500/500"
tui_keys 'C-\'
check "SIGQUIT (C-\\): exits 131" tui_wait "EXIT=131"
check "SIGQUIT: terminal restored" tui_wait "TTY-RESTORED"
check "SIGQUIT: cursor shown again" cursor_back
check "--ascii: not one byte above ASCII written" ascii_only
check "--no-color: no colour written" colourless

console 80x24 xterm-256color LANG=C.UTF-8
check "SIGTERM: running" tui_wait "rows 1-20"
pid=$(cat "$tmp/console.pid" 2>/dev/null)
if [ -n "$pid" ]; then
    kill -TERM "$pid"
    check "SIGTERM: exits 143" tui_wait "EXIT=143"
    check "SIGTERM: terminal restored" tui_wait "TTY-RESTORED"
    check "SIGTERM: cursor shown again" cursor_back
else
    fail "SIGTERM: console process not found"
fi

# ---- the agent endpoint while the console is open ----
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
cat >"$tmp/wrap.sh" <<EOF2
LANG=C.UTF-8 "$RAMPART" --db "$db" tui
echo "EXIT=\$?"
EOF2
tui_start 80x24 xterm-256color "sh $tmp/wrap.sh"
check "agent: serving" tui_wait "agent: 0 lookups"
sock="$XDG_RUNTIME_DIR/rampart/agent.sock"
tui_poll 10 test -S "$sock"
curl -sS --unix-socket "$sock" http://localhost/v1/tokens/nobody >"$tmp/out" 2>"$tmp/err"
check "agent: a lookup is answered" out_has 'no live credential is named'

check "agent: the header counts it" tui_wait "agent: 1 lookup"
tui_keys 4
check "agent: its audit line in the log view" tui_wait "by=name"
tui_keys Q
check "agent: quits" tui_wait "EXIT=0"
check "agent: socket closed" tui_poll 10 test ! -S "$sock"
checks_done
