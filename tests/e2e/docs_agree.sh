#!/bin/sh
# What users read agrees with what rampart does. The command paths and their
# options come from the tables the commands parse with (`rampart __complete
# options`), never from a list here; for each one:
# - the overview (`rampart --help`) and the group's overview list it, and list
#   nothing the tables lack;
# - its --help names every option it takes; the man page's entry for it (the
#   COMMANDS section, rendered with man -l) names every option, and every option
#   the entry lists (synopsis, option items) is one it takes or a global one;
#   every command the man page's COMMANDS section lists exists;
# - the bash and zsh completions (assets/) offer the command and its options;
# - for the agent: every route `agent --help` lists (printed from the route
#   table) is in the man page and the other way round, and the keys each says
#   the route's reply has are the keys a real agent's reply has, fetched over its
#   unix socket from a cache synced from a real serve-api.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/server.sh"
. "$here/agent_lib.sh"
root=$(cd "$here/../.." && pwd)
trap 'stop_agents; stop_server; rm -rf "$tmp"' EXIT INT TERM
man1="$root/assets/rampart.1"
bcomp="$root/assets/rampart.bash-completion"
zcomp="$root/assets/_rampart"

for tool in man python3 zsh; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "not ok - $tool is missing (make deps installs it)"
        exit 1
    fi
done

# report NAME LIST: one check that LIST (what disagrees, "; "-separated) is empty.
report() {
    echo "$2" >"$tmp/out"
    : >"$tmp/err"
    check "$1" [ -z "$2" ]
}

# ---- the tables ----
# $paths: every command path, "cmd" or "group:sub"; $groups: the groups.
tops=$("$RAMPART" __complete options)
paths=""
groups=""
for c in $tops; do
    subs=$("$RAMPART" __complete options "$c" | grep -v '^-')
    if [ -z "$subs" ]; then
        paths="$paths $c"
        continue
    fi
    groups="$groups $c"
    for s in $subs; do paths="$paths $c:$s"; done
done
words() { echo "$1" | tr ':' ' '; }
# opts PATH: the path's options from its table, one a line ("--name"; "-o").
opts() {
    # shellcheck disable=SC2046 # the path's words
    "$RAMPART" __complete options $(words "$1") | grep '^-' | sed 's/=$//'
}
n=$(echo "$paths" | wc -w)
echo "$paths" >"$tmp/out"
check "the tables give the command paths ($n, $(echo "$groups" | wc -w) groups)" \
    sh -c '[ "$0" -ge 25 ] && [ -n "$1" ]' "$n" "$groups"
# The global options: the overview's usage line, and --help.
globals="$("$RAMPART" --help | head -n 1 | grep -o -e '--[a-z][a-z-]*' | tr '\n' ' ')--help"

# ---- the overviews ----
"$RAMPART" --help >"$tmp/help.txt"
# The command names the overview lists, one a line.
sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z_-]*\) .*/\1/p' "$tmp/help.txt" >"$tmp/listed"
echo "$tops" >"$tmp/tops"
bad=""
cmp -s "$tmp/listed" "$tmp/tops" ||
    bad="overview lists: $(tr '\n' ' ' <"$tmp/listed"); tables: $(tr '\n' ' ' <"$tmp/tops")"
for g in $groups; do
    # The group's line and its continuation lines: the names after the colon.
    listed=$(sed -n "/^Commands:/,/^\$/p" "$tmp/help.txt" |
        awk -v g="$g" '/^  [a-z]/ { on = ($1 == g) } on' | tr '\n' ' ' |
        sed 's/^[^:]*: *//; s/,/ /g' | tr -s ' ' '\n' | grep . | sort)
    table=$("$RAMPART" __complete options "$g" | grep -v '^-' | sort)
    # shellcheck disable=SC2086,SC2116 # the names on one line
    [ "$listed" = "$table" ] || bad="$bad rampart --help's $g: $(echo $listed), tables: $(echo $table);"
    own=$("$RAMPART" "$g" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z_-]*\) .*/\1/p' | sort)
    # shellcheck disable=SC2086,SC2116
    [ "$own" = "$table" ] || bad="$bad rampart $g --help: $(echo $own), tables: $(echo $table);"
done
report "the overviews list every command and subcommand of the tables, and no other" "$bad"

# ---- --help ----
bad=""
for p in $paths; do
    # A command whose table offers nothing, not even --help (help, version): none.
    # shellcheck disable=SC2046 # the path's words
    [ -n "$("$RAMPART" __complete options $(words "$p"))" ] || continue
    # shellcheck disable=SC2046
    "$RAMPART" $(words "$p") --help >"$tmp/phelp" 2>&1 || bad="$bad $(words "$p") --help fails;"
    for o in $(opts "$p"); do
        grep -q -e "$o\b" "$tmp/phelp" || bad="$bad $(words "$p") $o;"
    done
    # The other way: the options its usage and option lines name.
    for o in $(grep -E '^(usage:|[[:space:]]+\[?--)' "$tmp/phelp" | grep -o -e '--[a-z][a-z-]*' | sort -u); do
        { opts "$p"; echo "$globals" | tr ' ' '\n'; } | grep -qx -e "$o" ||
            bad="$bad $(words "$p") --help lists $o, which it does not take;"
    done
done
report "every command's --help names each option it takes, and only those" "$bad"

# ---- the man page ----
LC_ALL=C MANWIDTH=1000 man -l "$man1" >"$tmp/man.txt" 2>"$tmp/err"
sed -n '/^COMMANDS$/,/^[A-Z]/p' "$tmp/man.txt" >"$tmp/commands.txt"
check "the man page renders, with a COMMANDS section" sh -c '[ "$(wc -l <"$0")" -gt 100 ]' \
    "$tmp/commands.txt"
# The COMMANDS section as "PATH<TAB>WHERE<TAB>WORD" lines: each entry's tag (a line
# indented 7: "rules create --cidr CIDR …", or several "a, b" at once) names its
# paths (WHERE "path"); the options of the tag's own part (WHERE "synopsis"), of
# the entry's option items (a line indented 14 that starts with '-', its text
# indented 21 below: "item") and of its text ("text") belong to them.
awk -v groups=" $groups " '
    function flush_tag(line,   n, parts, i, w, p) {
        npaths = 0
        n = split(line, parts, /, /)
        for (i = 1; i <= n; i++) {
            split(parts[i], w, " ")
            p = w[1]
            if (index(groups, " " p " ") && w[2] ~ /^[a-z]/)
                p = p ":" w[2]
            paths[++npaths] = p
            print p "\tpath\t" p
            emit(p, "synopsis", parts[i])
        }
    }
    function emit(p, where, text,   t) {
        t = text
        while (match(t, /(^|[^a-z-])(--[a-z][a-z-]*|-o)([^a-z-]|$)/)) {
            o = substr(t, RSTART, RLENGTH)
            gsub(/^[^-]*|[^a-z-]$/, "", o)
            print p "\t" where "\t" o
            t = substr(t, RSTART + RLENGTH - 1)
        }
    }
    # An item: a line indented 14 that starts with "-", its text indented 21 below.
    function settle(is_item,   i, line) {
        if (pending == "")
            return
        line = pending
        sub(/^ +/, "", line)
        for (i = 1; i <= npaths; i++)
            emit(paths[i], is_item ? "item" : "text", is_item ? line : pending)
        pending = ""
    }
    { settle(/^                     [^ ]/) }
    /^       [^ ]/ { sub(/^ +/, ""); flush_tag($0); next }
    /^   [^ ]/ { npaths = 0; next }
    npaths > 0 && /^              -/ { pending = $0; next }
    npaths > 0 { for (i = 1; i <= npaths; i++) emit(paths[i], "text", $0) }
' "$tmp/commands.txt" >"$tmp/man.entries"
check "... whose entries the test can read (tags and options found)" sh -c \
    'grep -q "	path	" "$0" && grep -q "	item	" "$0" && grep -q "	synopsis	" "$0"' \
    "$tmp/man.entries"
bad=""
for p in $paths; do
    grep -q "^$p	path	" "$tmp/man.entries" || { bad="$bad $(words "$p"): no entry;"; continue; }
    for o in $(opts "$p"); do
        # The common and global options: said once (GLOBAL OPTIONS).
        echo " --db $globals " | grep -q -e " $o " && continue
        grep -q "^$p	[a-z]*	$o\$" "$tmp/man.entries" && continue
        # -o FORMAT is --output FORMAT (rampart(1), OUTPUT FOR SCRIPTS).
        [ "$o" = --output ] && grep -q "^$p	[a-z]*	-o\$" "$tmp/man.entries" && continue
        bad="$bad $(words "$p") $o;"
    done
done
report "the man page has an entry for every command path, naming each option it takes" "$bad"
bad=""
for p in $(cut -f1,2 "$tmp/man.entries" | grep '	path$' | cut -f1 | sort -u); do
    echo " $paths " | grep -q " $p " || { bad="$bad $(words "$p") (no such command);"; continue; }
    for o in $(grep "^$p	\(synopsis\|item\)	" "$tmp/man.entries" | cut -f3 | sort -u); do
        { opts "$p"; echo "$globals" | tr ' ' '\n'; } | grep -qx -e "$o" ||
            bad="$bad $(words "$p") $o;"
    done
done
report "every command and option the man page's COMMANDS section lists exists in the tables" "$bad"

# ---- the completions ----
# bash_offers / zsh_offers WORD...: what each completion offers for the last word,
# one a line (the rampart under test first on PATH: they ask it).
bash_offers() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rampart
             printf "%s\n" "${COMPREPLY[@]}"' _ "$bcomp" "$RAMPART" "$@" 2>&1
}
zsh_offers() {
    zsh -f -c '. "$1"; shift; words=("$@"); CURRENT=$#; _rampart_candidates
               (( $#reply )) && print -rl -- $reply' _ "$zcomp" "$RAMPART" "$@" 2>&1
}
for shell in bash zsh; do
    bad=""
    ${shell}_offers "" >"$tmp/offered"
    for c in $tops; do grep -qx -e "$c" "$tmp/offered" || bad="$bad $c;"; done
    for g in $groups; do
        ${shell}_offers "$g" "" >"$tmp/offered"
        for s in $("$RAMPART" __complete options "$g" | grep -v '^-'); do
            grep -qx -e "$s" "$tmp/offered" || bad="$bad $g $s;"
        done
    done
    for p in $paths; do
        # shellcheck disable=SC2046 # the path's words
        ${shell}_offers $(words "$p") - >"$tmp/offered"
        for o in $(opts "$p"); do
            grep -qx -e "$o" "$tmp/offered" || bad="$bad $(words "$p") $o;"
        done
    done
    report "$shell completion offers every command, subcommand and option of the tables" "$bad"
done

# ---- the agent's routes: --help, the man page and real replies ----
# route_keys FILE: "ROUTE<TAB>KEYS" for each "GET ROUTE" line of FILE (indented)
# and the first {"key", …} of the lines below it; {id} is written ID, as rampart(1)
# writes it; the keys sorted.
route_keys() {
    awk '
        /^ +GET \/[^ ]*$/ { if (r != "") out(); r = $2; text = ""; next }
        r != "" && /^ *$/ { out(); r = ""; next }
        r != "" { text = text " " $0 }
        END { if (r != "") out() }
        function out(   keys, k) {
            keys = ""
            if (match(text, /\{[^}]*\}/)) {
                k = substr(text, RSTART, RLENGTH)
                while (match(k, /"[a-z_]+"/)) {
                    keys = keys substr(k, RSTART + 1, RLENGTH - 2) "\n"
                    k = substr(k, RSTART + RLENGTH)
                }
            }
            cmd = "sort | tr \"\\n\" \" \""
            printf "%s\t", r
            printf "%s", keys | cmd
            close(cmd)
            printf "\n"
        }
    ' "$1" | sed 's/{\([a-z]*\)}/\U\1/g' | sort
}
"$RAMPART" agent --help | sed -n '/^Routes/,/^$/p' | sed 1d >"$tmp/help.routes"
route_keys "$tmp/help.routes" >"$tmp/help.keys"
sed -n '/^   The agent endpoint/,/^   [A-Z]/p' "$tmp/man.txt" | route_keys /dev/stdin >"$tmp/man.keys"
n=$(wc -l <"$tmp/help.keys")
cp "$tmp/help.keys" "$tmp/out"
check "agent --help lists the routes ($n), each with the keys of its reply" sh -c \
    '[ "$0" -ge 9 ] && ! grep -q "	\$" "$1"' "$n" "$tmp/help.keys"
diff "$tmp/help.keys" "$tmp/man.keys" >"$tmp/out"
check "the man page lists the same routes with the same keys" [ ! -s "$tmp/out" ]

# A cache synced from a real serve-api: a credential and a rule with every field.
export RAMPART_DB="$tmp/cache.db"
start_server docs || exit 1
POLICY=ipp_2AbCdEfGhIjKlMnOpQrStUvWxYz
run creds create --description web --metadata m --acl 'bind:*.example.com' --sync
CRED=$(sed -n 's/^credential \([^ ]*\) .*/\1/p' "$tmp/out")
run rules create --cidr 10.0.0.0/8 --policy $POLICY --action allow --description d \
    --metadata m --sync
RULE=$(sed -n 's/^id  *\(ipr_[^ ]*\)$/\1/p' "$tmp/out")
check "setup: a credential and a rule synced" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$CRED" "$RULE"
stop_server
mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
start_agent a --listen "unix:$tmp/run/a.sock" --key-file "$tmp/agent.key"
check "setup: the agent listens" [ -n "$sock" ]

# fill ROUTE: the route with a real value for each placeholder, or nothing.
fill() {
    echo "$1" | sed -e "s|/credentials/ID|/credentials/$CRED|" \
        -e "s|/ip_policies/ID|/ip_policies/$POLICY|" -e "s|/ip_policy_rules/ID|/ip_policy_rules/$RULE|" \
        -e 's|NAME|web|' -e 's|ADDR|10.1.2.3|' | grep -Ev '[/=][A-Z]+([/?]|$)'
}
bad=""
while IFS='	' read -r route keys; do
    url=$(fill "$route")
    [ -n "$url" ] || { bad="$bad $route: the test cannot fill it in;"; continue; }
    ureq "$sock" "$url"
    got=$(python3 -c 'import json, sys; print(" ".join(sorted(json.load(open(sys.argv[1])))) + " ")' \
        "$tmp/out" 2>/dev/null)
    [ "$status" = 200 ] || { bad="$bad $route: status $status;"; continue; }
    # owner_id: a credential's, when the remote gives it one (serve-api does not).
    want=$(echo "$keys" | sed 's/owner_id //')
    [ "$got" = "$want" ] || [ "$got" = "$keys" ] ||
        bad="$bad $route: replies {$got}, documented {$keys};"
done <"$tmp/help.keys"
report "each route's reply has the keys agent --help and the man page give it" "$bad"
checks_done
