# Shared helpers of the console tests (tests/tui/*.sh) and its bench
# (tests/bench/ui.sh). Source tests/e2e/lib.sh first (it gives $tmp, $RAMPART,
# check, a private HOME), or set $tmp and $RAMPART yourself:
#
#   . "$(dirname "$0")/../e2e/lib.sh"
#   . "$(dirname "$0")/../e2e/server.sh"   # only when the test needs serve-api
#   . "$(dirname "$0")/lib.sh"              # last: its exit trap also stops both
#
#   tui_cache N DB [POLICIES]  a cache of N queued rules made by `rules import`:
#                              rule i is 10.x.y.z/32 (i in the low bytes), policy
#                              ipp_test%05d of i mod POLICIES (default 7), deny
#                              for even i, allow for odd, described "rule i"
#   tui_console DB [ARGS...]   `rampart --db DB tui --no-agent ARGS` in tmux at
#                              80x24 (xterm-256color); its exit status goes to
#                              $tmp/exit when it ends
#   tui_exited_ok              poll for that status; true when it is 0
#
# Headless runs (no terminal: `tui --headless SCRIPT` prints every `dump`):
#
#   headless_play DB NAME [ARGS...]  the key script on stdin, saved as $tmp/NAME.keys,
#                              run by `rampart --db DB tui --no-agent ARGS`; $status
#                              is its exit status, $tmp/out and $tmp/err its output,
#                              one file per dumped screen: $tmp/screen.1, .2, ...
#   screen N TEXT / no_screen N TEXT  screen N holds (does not hold) TEXT
#
# Every test talks to its own tmux server (a socket in $tmp, no user config), so
# tests never see each other's sessions or the user's. Waits poll the screen with
# `tmux capture-pane` in a bounded loop; nothing sleeps for a guessed time.
#
#   tui_start WxH TERM CMD     start CMD (one shell string) in a fresh server and
#                              session of that size; TERM is what CMD sees
#   tui_keys KEY...            tmux send-keys names: Enter Escape Tab BTab Up Down
#                              PageUp PageDown Home End Space BSpace C-d q ...
#   tui_type TEXT              TEXT typed literally, character by character
#   tui_wait TEXT [SECONDS]    until the screen (or the lines that scrolled off
#                              it) shows TEXT (fixed string; default 10 s); on
#                              timeout the screen goes to $tmp/out so `check`
#                              shows it, and the status is 1
#   tui_wait_gone TEXT [S]     until TEXT is no longer on the screen
#   tui_wait_exit [SECONDS]    until CMD has exited (the pane stays, dead)
#   tui_capture                the screen as text, on stdout
#   tui_resize WxH             resize the window (the console gets SIGWINCH)
#   tui_pipe FILE              from now on append every byte CMD writes to FILE
#   tui_pipe_stop              stop that
#   tui_stop                   kill the server and wait for it (also done at exit)
#
# Exit status of CMD: wrap it, e.g. tui_start 80x24 vt100 "$RAMPART tui; echo EXIT=\$?"
# and tui_wait "EXIT=0".

tui_cache() {
    awk -v n="$1" -v p="${3:-7}" 'BEGIN {
        printf "[";
        for (i = 0; i < n; i++)
            printf "%s{\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy_id\":\"ipp_test%05d\",\"action\":\"%s\",\"description\":\"rule %d\"}",
                (i ? ",\n" : ""), int(i / 65536) % 256, int(i / 256) % 256, i % 256, i % p,
                (i % 2 ? "allow" : "deny"), i;
        print "]" }' >"$tmp/rules-$1.json" &&
        "$RAMPART" --db "$2" rules import "$tmp/rules-$1.json" >/dev/null
    tui_rc=$?
    rm -f "$tmp/rules-$1.json"
    return $tui_rc
}

tui_sock="$tmp/tmux.sock"
tui_session=rampart

tui_tmux() { tmux -S "$tui_sock" -f /dev/null "$@"; }

tui_gone() { ! tui_tmux list-sessions >/dev/null 2>&1; }

# The server ends after kill-server returns: a new one started before then would
# talk to the dying one ("server exited unexpectedly"), so wait for it.
tui_stop() {
    tui_tmux kill-server 2>/dev/null || true # none running is fine (also under set -e)
    tui_poll 5 tui_gone || true
}
# stop_server exists only where tests/e2e/server.sh was sourced (not in the bench).
tui_cleanup() {
    tui_stop
    if command -v stop_server >/dev/null 2>&1; then stop_server 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap tui_cleanup EXIT INT TERM

tui_start() {
    tui_stop
    tui_w=${1%x*}
    tui_h=${1#*x}
    # The server inherits this environment (HOME, XDG_*, RAMPART_*) when it starts.
    tui_tmux new-session -d -s "$tui_session" -x "$tui_w" -y "$tui_h" \
        "env TERM=$2 $3" || return 1
    tui_tmux set-option -t "$tui_session" remain-on-exit on >/dev/null
    tui_tmux set-option -g status off >/dev/null
    tui_tmux resize-window -t "$tui_session" -x "$tui_w" -y "$tui_h" 2>/dev/null || true
}

tui_keys() { tui_tmux send-keys -t "$tui_session" "$@"; }

tui_type() { tui_tmux send-keys -t "$tui_session" -l -- "$1"; }

tui_capture() { tui_tmux capture-pane -p -t "$tui_session" 2>/dev/null; }

# tui_poll SECONDS CONDITION...: run CONDITION every 0.05 s until it succeeds.
# (Variables here are tui_-prefixed: sh functions share the caller's variables.)
tui_poll() {
    tui_limit=$(($1 * 20))
    shift
    tui_n=0
    while [ $tui_n -lt $tui_limit ]; do
        if "$@"; then
            return 0
        fi
        sleep 0.05 # polling the screen, bounded by the limit above
        tui_n=$((tui_n + 1))
    done
    return 1
}

# Text that scrolled off the top (a program's last lines after it left the
# alternate screen) still counts as shown; "gone" looks at the screen only.
tui_has() { tui_tmux capture-pane -p -S - -t "$tui_session" 2>/dev/null | grep -F -q -- "$1"; }
tui_lacks() { ! tui_capture | grep -F -q -- "$1"; }

# The screen at a failed wait, for `check` to show.
tui_fail_screen() {
    {
        echo "(waited for: $1)"
        tui_capture
    } >"$tmp/out"
    : >"$tmp/err"
    return 1
}

tui_wait() {
    tui_poll "${2:-10}" tui_has "$1" || tui_fail_screen "$1"
}

tui_wait_gone() {
    tui_poll "${2:-10}" tui_lacks "$1" || tui_fail_screen "no more $1"
}

tui_dead() {
    [ "$(tui_tmux display-message -p -t "$tui_session" '#{pane_dead}' 2>/dev/null)" = 1 ]
}

tui_wait_exit() {
    tui_poll "${1:-10}" tui_dead || tui_fail_screen "the program to exit"
}

tui_resize() {
    tui_tmux resize-window -t "$tui_session" -x "${1%x*}" -y "${1#*x}"
}

tui_pipe() { tui_tmux pipe-pane -t "$tui_session" -o "cat >>'$1'"; }

tui_console() {
    rm -f "$tmp/exit"
    tui_db=$1
    shift
    tui_start 80x24 xterm-256color \
        "$RAMPART --db '$tui_db' tui --no-agent $*; echo \$? >'$tmp/exit'"
}

tui_exit_written() { [ -s "$tmp/exit" ]; }

tui_exited_ok() {
    tui_poll 10 tui_exit_written && [ "$(cat "$tmp/exit")" = 0 ] && rm -f "$tmp/exit"
}

tui_pipe_stop() { tui_tmux pipe-pane -t "$tui_session"; }

# ---- headless runs ----

headless_play() {
    hp_db=$1
    hp_name=$2
    shift 2
    cat >"$tmp/$hp_name.keys"
    "$RAMPART" --db "$hp_db" tui --no-agent "$@" --headless "$tmp/$hp_name.keys" \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    rm -f "$tmp"/screen.*
    awk -v dir="$tmp" 'BEGIN { n = 1 } $0 == "----" { n++; next }
        { print > (dir "/screen." n) }' "$tmp/out"
}
screen() { [ -f "$tmp/screen.$1" ] && grep -F -q -- "$2" "$tmp/screen.$1"; }
no_screen() { [ -f "$tmp/screen.$1" ] && ! grep -F -q -- "$2" "$tmp/screen.$1"; }
