# Shared helpers of the end-to-end shell tests. Each check prints "ok - NAME" or
# "not ok - NAME" (with the command's output indented below), a skipped one
# "ok - NAME # SKIP WHY"; tests/run.sh counts them. A script ends with
# `checks_done`, which prints its plan ("1..N", as TAP does): N is the number
# given to `plan N` at the top, or else the number of checks run. tests/run.sh
# fails a script that printed no plan (it stopped early) or whose lines do not
# add up to it.
# The rampart under test is $RAMPART; every test file gets its own temp HOME.
set -u
: "${RAMPART:?set RAMPART to the rampart binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rampart-e2e.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/home/data" XDG_CONFIG_HOME="$tmp/home/config"
unset SSH_CONNECTION SSH_CLIENT # an export checks who would be locked out
unset RAMPART_DB RAMPART_API_URL RAMPART_API_KEY RAMPART_CONFIG RAMPART_VERSION_HEADER \
      RAMPART_RATE
mkdir -p "$HOME"
status=0
checks=0
planned=""

# plan N: this script runs N checks, skips included, whatever is installed.
plan() { planned=$1; }

# checks_done: the script's last line: its plan.
checks_done() { echo "1..${planned:-$checks}"; }

# skip NAME WHY: a check that could not run here, counted as skipped.
skip() {
    checks=$((checks + 1))
    echo "ok - $1 # SKIP $2"
}

# pass NAME / fail NAME: a check decided by the script itself.
pass() {
    checks=$((checks + 1))
    echo "ok - $1"
}
fail() {
    checks=$((checks + 1))
    echo "not ok - $1"
}

# skip_all WHY: none of this script's checks can run here: one skip, and exit.
skip_all() {
    echo "1..0 # SKIP $1"
    exit 0
}

# run ARGS...: run rampart, keep stdout/stderr in $tmp/out, $tmp/err and the status.
run() {
    "$RAMPART" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
}

# run_in FILE ARGS...: the same with FILE on standard input.
run_in() {
    in=$1
    shift
    "$RAMPART" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"
    status=$?
}

# check NAME CMD...: one test line, from whether CMD succeeds.
check() {
    name=$1
    shift
    checks=$((checks + 1))
    if "$@"; then
        echo "ok - $name"
    else
        echo "not ok - $name"
        echo "#   status $status; stdout:"
        sed 's/^/#     /' "$tmp/out" | head -n 15
        echo "#   stderr:"
        sed 's/^/#     /' "$tmp/err" | head -n 15
    fi
}

status_is() { [ "$status" -eq "$1" ]; }
out_has() { grep -q -e "$1" "$tmp/out"; }
err_has() { grep -q -e "$1" "$tmp/err"; }
out_lacks() { ! grep -q -e "$1" "$tmp/out"; }
err_lacks() { ! grep -q -e "$1" "$tmp/err"; }
err_empty() { [ ! -s "$tmp/err" ]; }
out_lines() { [ "$(wc -l <"$tmp/out")" -eq "$1" ]; }
# Both: status and a stderr message (the usual shape of a refusal).
refused() { status_is "$1" && err_has "$2"; }
# An HTTP reply (tests that set $status to the HTTP status and keep the body in
# $tmp/out): that status and a body matching PATTERN.
replied() { [ "$status" = "$1" ] && out_has "$2"; }
replied_without() { [ "$status" = "$1" ] && out_lacks "$2"; }
