#!/bin/sh
# README.md run as a newcomer runs it: a fresh clone, the README's two commands
# (its first block: `make run` and `make test`, whose part here is the binary they
# leave in build/rampart), then every block marked `sh`, in order, verbatim, in
# one shell started at the clone's root, with a plain PATH, a fresh HOME, no
# RAMPART_* setting and no config file (the blocks use --sandbox: no account).
#
# Each command of a block is one step (lines ending in `\` continue it) and one
# test line: it must exit 0, or N when it carries a `# exit N` comment; the
# `#   TEXT` lines right under it (a hash and three spaces) are what it prints:
# each must be a line of its standard output or error, where `…` stands for
# anything (ids, times). Every block must be marked: `sh` (runs), or `console`,
# `ini`, `text` (only shows); an `ini` block must be a config file rampart reads.
#
# The clone is of this checkout's repository (a copy of its files when it is not
# one), with the working tree's README.md put over the clone's, so the README
# being edited is the one run. README_FILE=PATH runs another README instead.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
readme=${README_FILE:-$root/README.md}
clone="$tmp/clone"
steps="$tmp/steps"
mkdir -p "$steps" "$tmp/run" "$tmp/fresh-home"
chmod 700 "$tmp/run"

# Whatever the blocks left running (an agent, a sandbox server) when this ends.
leftovers() { pgrep -f -- "$tmp/fresh-home" 2>/dev/null; }
trap 'for p in $(leftovers); do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT INT TERM

# ---- every block is marked ----
awk 'BEGIN { kinds["sh"]; kinds["console"]; kinds["ini"]; kinds["text"] }
     /^```/ { if (open) { open = 0; next }
              open = 1; kind = substr($0, 4)
              if (!(kind in kinds)) printf "line %d: ```%s\n", NR, kind }' \
    "$readme" >"$tmp/unmarked"
cp "$tmp/unmarked" "$tmp/out"
: >"$tmp/err"
check "every block of the README is marked sh, console, ini or text" \
    sh -c '[ ! -s "$0" ]' "$tmp/unmarked"

# ---- every ini block is a config file rampart accepts ----
awk -v dir="$tmp" '/^```/ { if (ini) { ini = 0; next } if ($0 == "```ini") { ini = 1; n++ } next }
     ini { print > (dir "/block-" n ".ini") }' "$readme"
for f in "$tmp"/block-*.ini; do
    [ -f "$f" ] || continue
    chmod 600 "$f"
    RAMPART_CONFIG="$f" "$RAMPART" profiles >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "the README's config block ${f##*/block-} is one rampart reads (profiles)" status_is 0
done

# ---- the two commands come first ----
awk '/^```/ { n++; next } n == 1 { sub(/[[:space:]]*#.*/, ""); if ($0 != "") print }' \
    "$readme" >"$tmp/first"
first_kind=$(grep -m1 '^```' "$readme")
cp "$tmp/first" "$tmp/out"
check "the README's first block is sh: make run, make test" \
    sh -c '[ "$0" = "\`\`\`sh" ] && [ "$(cat "$1")" = "$(printf "make run\nmake test")" ]' \
    "$first_kind" "$tmp/first"

# ---- a fresh clone, after the two commands ----
if command -v git >/dev/null 2>&1 && git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    git clone -q "$root" "$clone" 2>"$tmp/err"
else
    mkdir -p "$clone"
    for f in "$root"/* "$root"/.[!.]*; do
        case ${f##*/} in build | build-* | .git) continue ;; esac
        [ -e "$f" ] && cp -R "$f" "$clone/"
    done
fi
cp "$readme" "$clone/README.md"
mkdir -p "$clone/build"
ln "$RAMPART" "$clone/build/rampart" 2>/dev/null || cp "$RAMPART" "$clone/build/rampart"
check "a fresh clone with build/rampart where make run leaves it" \
    test -x "$clone/build/rampart" -a -f "$clone/Makefile"

# ---- the sh blocks, as steps ----
# For step N: N.cmd (the command), N.where (its README line), N.status (the exit
# status it must have), N.expect (the lines it must print), and one line of
# $tmp/steps.sh that runs it in a { } group (a group, not a subshell: variables,
# `cd` and background jobs stay for the next steps) and then checks it.
LC_ALL=C awk -v dir="$steps" '
    function flush(   status) {
        if (cmd == "") return
        n++
        status = 0
        if (match(cmd, /#[ \t]+exit[ \t]+[0-9]+/)) {
            status = substr(cmd, RSTART, RLENGTH); sub(/.*exit[ \t]+/, "", status)
        }
        printf "%s\n", cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
        printf "%d\n", where > (dir "/" n ".where"); close(dir "/" n ".where")
        printf "%d\n", status > (dir "/" n ".status"); close(dir "/" n ".status")
        printf "%s", expect > (dir "/" n ".expect"); close(dir "/" n ".expect")
        printf "{ %s\n} >\"$steps/%d.out\" 2>\"$steps/%d.err\"\n", cmd, n, n
        printf "readme_step %d $?\n", n
        cmd = ""; expect = ""
    }
    /^```/ {
        flush()
        if (open) { open = 0; run = 0; next }
        open = 1; blocks++; run = ($0 == "```sh" && blocks > 1); next
    }
    !run { next }
    cont { cmd = cmd "\n" $0; cont = /\\$/; next }
    /^#   / && cmd != "" { expect = expect substr($0, 5) "\n"; next }
    /^[[:space:]]*(#|$)/ { flush(); next }
    { flush(); cmd = $0; where = NR; cont = /\\$/ }
    END { flush() }' "$readme" >"$tmp/steps.sh"
nsteps=$(ls "$steps" | grep -c '[.]cmd$')
cp "$tmp/steps.sh" "$tmp/out"
check "the README's sh blocks hold $nsteps commands" [ "$nsteps" -ge 30 ]

cat >"$tmp/run.sh" <<'EOF'
# printed TEXT FILE...: TEXT (`…` standing for anything) is a whole line of one FILE.
printed() {
    want="$1" LC_ALL=C awk '
        function trim(s) { sub(/[ \t\r]+$/, "", s); return s }
        function fits(line,   n, p, i, at) {
            n = split(want, p, "…")
            if (n == 1) return line == want
            if (substr(line, 1, length(p[1])) != p[1]) return 0
            at = length(p[1]) + 1
            for (i = 2; i < n; i++) {
                k = index(substr(line, at), p[i])
                if (!k) return 0
                at += k - 1 + length(p[i])
            }
            return length(line) - at + 1 >= length(p[n]) &&
                substr(line, length(line) - length(p[n]) + 1) == p[n]
        }
        BEGIN { want = trim(ENVIRON["want"]) }
        fits(trim($0)) { found = 1; exit }
        END { exit !found }' "$2" "$3"
}
# readme_step N STATUS: one test line for step N.
readme_step() {
    cmd=$(head -n 1 "$steps/$1.cmd" | sed 's/  *# .*//')
    want=$(cat "$steps/$1.status")
    why=""
    [ "$2" -eq "$want" ] || why="exit status $2, expected $want"
    while IFS= read -r line; do
        printed "$line" "$steps/$1.out" "$steps/$1.err" || why="${why:+$why; }does not print: $line"
    done <"$steps/$1.expect"
    if [ -z "$why" ]; then
        printf 'ok - README line %s: %s\n' "$(cat "$steps/$1.where")" "$cmd"
    else
        printf 'not ok - README line %s: %s\n' "$(cat "$steps/$1.where")" "$cmd"
        printf '#   %s; stdout:\n' "$why"
        sed 's/^/#     /' "$steps/$1.out" | head -n 15
        echo "#   stderr:"
        sed 's/^/#     /' "$steps/$1.err" | head -n 15
    fi
}
EOF
cat "$tmp/steps.sh" >>"$tmp/run.sh"

# A plain PATH and a fresh HOME: nothing of the caller's environment but these.
# Each command prints its line from that shell, so the plan counts them here.
checks=$((checks + nsteps))
(
    cd "$clone" || exit 1
    env -i HOME="$tmp/fresh-home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
        XDG_RUNTIME_DIR="$tmp/run" steps="$steps" \
        timeout 120 sh "$tmp/run.sh" </dev/null ||
        echo "not ok - the README's blocks stopped: status $? (124: still running after 120 s)"
)

# What the blocks started, they stopped (the agent, its sandbox server).
gone=1
for _ in $(seq 100); do
    [ -z "$(leftovers)" ] && gone=0 && break
    sleep 0.1
done
check "nothing the blocks started is left running" [ "$gone" -eq 0 ]
checks_done
exit 0
