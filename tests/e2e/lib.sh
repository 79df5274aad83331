# Shared helpers of the end-to-end shell tests. Each test prints "ok - NAME" or
# "not ok - NAME" (with the command's output indented below); tests/run.sh counts them.
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
