#!/bin/sh
# `make install` into a temporary DESTDIR (PREFIX=/usr/local), then the installed
# files as a user meets them: the binary runs, the man page renders without a
# warning and documents every option, environment variable and exit status, the
# bash completion loads and completes every command and option, the systemd user
# units name the installed binary and pass `systemd-analyze verify`, and the
# socket unit's socket, passed the way systemd passes it, serves a token through
# the unit's ExecStart. `make uninstall` removes every file again. Then a
# package's layout: DESTDIR, PREFIX, BINDIR and MANDIR each given, every file
# where it was asked and nowhere else, and uninstalled with the same settings.
# The binary installed is $RAMPART itself: BUILD is its directory, and make is
# told never to rebuild it (-o), so a SAN build stays a SAN build.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/server.sh"
root=$(cd "$here/../.." && pwd)
build=$(cd "$(dirname "$RAMPART")" && pwd)
dest="$tmp/dest"
prefix=/usr/local
inst="$dest$prefix/bin/rampart"
man1="$dest$prefix/share/man/man1/rampart.1"
comp="$dest$prefix/share/bash-completion/completions/rampart"
zcomp="$dest$prefix/share/zsh/site-functions/_rampart"
doc="$dest$prefix/share/doc/rampart/config.example"
units="$dest$prefix/lib/systemd/user"
act_pid=""
trap '[ -n "$act_pid" ] && kill "$act_pid" 2>/dev/null; stop_server; rm -rf "$tmp"' \
    EXIT INT TERM

# make_in TARGET [VAR=VALUE...]: the project's install rules for this build,
# nothing rebuilt, DESTDIR=$dest PREFIX=$prefix unless given. Settings of a
# calling make (make test SAN=1 …) stay out of it.
make_in() {
    (
        unset MAKEFLAGS MFLAGS MAKELEVEL
        target=$1
        shift
        make --no-print-directory -C "$root" "$target" DESTDIR="$dest" PREFIX="$prefix" \
            BUILD="$build" -o "$build/rampart" "$@"
    ) >"$tmp/out" 2>"$tmp/err"
    status=$?
}
make_target() { make_in "$1"; }

mode_is() { [ "$(stat -c %a "$2")" = "$1" ]; }

# ---- install ----
make_target install
check "make install succeeds" status_is 0
for f in "$man1" "$comp" "$zcomp" "$doc" "${doc%/*}/nginx-fleet.conf" "$units/rampart-agent.service" \
    "$units/rampart-agent.socket" "$units/rampart-sync.service" "$units/rampart-sync.timer"; do
    check "installed 0644: ${f#"$dest"}" mode_is 644 "$f"
done
check "installed 0755: $prefix/bin/rampart" mode_is 755 "$inst"

"$inst" --version >"$tmp/out" 2>"$tmp/err"
status=$?
check "the installed binary runs: --version" sh -c \
    '[ "$0" -eq 0 ] && [ "$(cat "$1")" = "$("$2" --version)" ]' "$status" "$tmp/out" "$RAMPART"

# ---- the man page ----
# Every command path, for the man page and completion checks below.
paths="tui agent check serve-api sync plan status apply export profiles"
for s in create list get update resolve delete import export retry discard; do paths="$paths rules:$s"; done
for s in create list get update resolve delete token rotate retry discard; do paths="$paths creds:$s"; done

if command -v man >/dev/null 2>&1; then
    LC_ALL=C MANWIDTH=200 man --warnings -l "$man1" >"$tmp/man.txt" 2>"$tmp/err"
    status=$?
    cp "$tmp/man.txt" "$tmp/out"
    check "man -l renders the installed page without warnings" \
        sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ] && grep -q "^NAME" "$2"' \
        "$status" "$tmp/err" "$tmp/man.txt"
else
    echo "not ok - man is missing (make deps installs man-db)"
    : >"$tmp/man.txt"
fi
if command -v groff >/dev/null 2>&1; then
    groff -ww -man -z "$man1" >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "groff -ww finds nothing to warn about" sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ]' \
        "$status" "$tmp/err"
fi

# Options a command's --help lists (its usage lines and option lines; not the
# examples), one a line.
help_options() {
    # shellcheck disable=SC2046 # the path's words are the arguments
    "$inst" $(echo "$1" | tr ':' ' ') --help 2>&1 | grep -E '^(usage:|[[:space:]]+\[?--)' |
        grep -o -e '--[a-z][a-z-]*' | sort -u
}
grep -o -e '--[a-z][a-z-]*' "$tmp/man.txt" | sort -u >"$tmp/man.opts"
missing=""
for p in $paths; do
    for o in $(help_options "$p"); do
        grep -qx -e "$o" "$tmp/man.opts" || missing="$missing $(echo "$p" | tr ':' ' ') $o;"
    done
    grep -q "$(echo "$p" | tr ':' ' ')" "$tmp/man.txt" || missing="$missing command $p;"
done
echo "$missing" >"$tmp/out"
check "the man page has every command and every option of their --help" \
    [ -z "$missing" ]

# Every environment variable the code reads (config table and getenv calls).
envs=$(grep -rhoE '"(RAMPART|XDG)_[A-Z_]+"|getenv\("[A-Z_]+"\)' "$root/src" "$root/ui" \
    "$root/sync" | grep -oE '[A-Z][A-Z_]+' | sort -u)
missing=""
for v in $envs; do grep -q -e "$v" "$tmp/man.txt" || missing="$missing $v"; done
echo "$missing" >"$tmp/out"
check "the man page names every environment variable read ($(echo "$envs" | wc -w))" \
    [ -z "$missing" ]
check "the man page has exit statuses 0 to 4 and the --faults syntax" sh -c \
    'sed -n "/^EXIT STATUS/,/^[A-Z]/p" "$0" | grep -c "^       [0-4] " | grep -qx 5 &&
     grep -q "OP:KIND@SELECT" "$0"' "$tmp/man.txt"
check "the man page names the files: config, cache, lock, key, socket, sandbox" sh -c \
    'for f in rampart/config rampart.db-sync.lock agent.key agent.sock rampart/sandbox/ \
         rampart/rampart.db; do grep -q -e "$f" "$0" || exit 1; done' "$tmp/man.txt"

# ---- bash completion ----
# complete WORD...: what the completion offers for the last word, the installed
# rampart first on PATH (the completion asks it what each command takes).
complete_words() {
    PATH="$(dirname "$inst"):$PATH" \
        bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rampart
             printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" 2>&1
}
bash -c '. "$1" && complete -p rampart' _ "$comp" >"$tmp/out" 2>"$tmp/err"
status=$?
check "the completion loads in bash and registers for rampart" \
    sh -c '[ "$0" -eq 0 ] && grep -q "complete -F _rampart rampart" "$1"' "$status" "$tmp/out"
complete_words rampart ru >"$tmp/out"
check "rampart ru<TAB> completes to rules" sh -c '[ "$(cat "$0")" = rules ]' "$tmp/out"
complete_words rampart rules cr >"$tmp/out"
check "rampart rules cr<TAB> completes to create" sh -c '[ "$(cat "$0")" = create ]' "$tmp/out"
complete_words rampart rules create --action "" >"$tmp/out"
check "--action completes to allow and deny" sh -c '[ "$(cat "$0" | tr "\n" " ")" = "allow deny " ]' \
    "$tmp/out"
"$inst" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }' | sort >"$tmp/cmds"
complete_words rampart "" | sort >"$tmp/out"
check "rampart <TAB> offers every command of --help" cmp -s "$tmp/cmds" "$tmp/out"
missing=""
for p in $paths; do
    # shellcheck disable=SC2046 # the path's words are completion words
    offered=$(complete_words rampart $(echo "$p" | tr ':' ' ') --)
    for o in $(help_options "$p"); do
        echo "$offered" | grep -qx -e "$o" || missing="$missing $(echo "$p" | tr ':' ' ') $o;"
    done
done
echo "$missing" >"$tmp/out"
check "the completion offers every option of every command's --help" \
    [ -z "$missing" ]

# ---- systemd user units ----
exec_start=$(sed -n 's/^ExecStart=//p' "$units/rampart-agent.service")
listen_stream=$(sed -n 's/^ListenStream=//p' "$units/rampart-agent.socket")
echo "$exec_start / $listen_stream" >"$tmp/out"
check "the service runs the installed binary: ExecStart=$prefix/bin/rampart agent" \
    [ "$exec_start" = "$prefix/bin/rampart agent" ]
check "the socket is %t/rampart/agent.sock, 0600 in a 0700 directory" sh -c \
    '[ "$1" = "%t/rampart/agent.sock" ] && grep -qx SocketMode=0600 "$0" &&
     grep -qx DirectoryMode=0700 "$0"' "$units/rampart-agent.socket" "$listen_stream"
check "the service is hardened: UMask=0077, NoNewPrivileges, ProtectSystem=strict" sh -c \
    'grep -qx UMask=0077 "$0" && grep -qx NoNewPrivileges=yes "$0" &&
     grep -qx ProtectSystem=strict "$0" && grep -q "^ReadWritePaths=.*%h/.local/share/rampart" "$0"' \
    "$units/rampart-agent.service"
sync_start=$(sed -n 's/^ExecStart=//p' "$units/rampart-sync.service")
echo "$sync_start" >"$tmp/out"
check "the sync service runs the installed binary: ExecStart=$prefix/bin/rampart sync --timeout 3600" \
    [ "$sync_start" = "$prefix/bin/rampart sync --timeout 3600" ]
check "... and systemd stops a run a minute past that deadline" \
    grep -qx TimeoutStartSec=3660 "$units/rampart-sync.service"
check "... once a run (oneshot), hardened like the agent's" sh -c \
    'grep -qx Type=oneshot "$0" && grep -qx UMask=0077 "$0" && grep -qx NoNewPrivileges=yes "$0" &&
     grep -qx ProtectSystem=strict "$0" && grep -q "^ReadWritePaths=.*%h/.local/share/rampart" "$0"' \
    "$units/rampart-sync.service"
check "the timer: a minute after the last run ended, spread, enabled by timers.target" sh -c \
    'grep -qx OnUnitInactiveSec=60s "$0" && grep -q "^RandomizedDelaySec=" "$0" &&
     grep -qx WantedBy=timers.target "$0"' "$units/rampart-sync.timer"
if command -v systemd-analyze >/dev/null 2>&1; then
    # Verified as installed, the binary's path pointing into DESTDIR.
    mkdir -p "$tmp/units" "$tmp/vrun"
    chmod 700 "$tmp/vrun"
    for u in rampart-agent.service rampart-sync.service; do
        sed "s|$prefix/bin/rampart|$inst|" "$units/$u" >"$tmp/units/$u"
    done
    cp "$units/rampart-agent.socket" "$units/rampart-sync.timer" "$tmp/units/"
    XDG_RUNTIME_DIR="$tmp/vrun" systemd-analyze verify --user --man=no \
        "$tmp/units/rampart-agent.service" "$tmp/units/rampart-agent.socket" \
        "$tmp/units/rampart-sync.service" "$tmp/units/rampart-sync.timer" \
        >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "systemd-analyze verify --user accepts the four units" \
        sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ]' "$status" "$tmp/err"
else
    echo "ok - systemd-analyze verify # SKIP systemd-analyze is not installed"
fi

# ---- socket activation, as the units do it ----
if command -v systemd-socket-activate >/dev/null 2>&1; then
    export XDG_RUNTIME_DIR="$tmp/run"
    mkdir -p "$XDG_RUNTIME_DIR/rampart"
    chmod 700 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/rampart"
    sock=$(echo "$listen_stream" | sed "s|%t|$XDG_RUNTIME_DIR|")
    start_server install || exit 1
    "$inst" creds create --description web --sync >"$tmp/out" 2>"$tmp/err"
    token=$(sed -n 's/^token: //p' "$tmp/out")
    check "setup: a credential synced with its token" [ -n "$token" ]
    stop_server
    # What a user manager hands its services (the activator passes nothing else).
    activate_env="-E HOME -E XDG_RUNTIME_DIR -E XDG_DATA_HOME -E XDG_CONFIG_HOME"
    # The socket unit's socket and a loopback TCP one, passed to the service's
    # ExecStart (the installed binary) at the first connection. The activator
    # takes no port 0: another port is tried when one is taken.
    for try in 1 2 3 4 5 6 7 8 9 10; do
        port=$((20000 + ($$ * 7 + try * 7919) % 40000))
        # shellcheck disable=SC2086 # ExecStart's words
        systemd-socket-activate -l "$sock" -l "127.0.0.1:$port" $activate_env \
            $dest$exec_start 2>"$tmp/act.log" &
        act_pid=$!
        i=0
        while ! grep -q "as 4" "$tmp/act.log" && kill -0 "$act_pid" 2>/dev/null &&
            [ $i -lt 200 ]; do
            sleep 0.05
            i=$((i + 1))
        done
        grep -q "as 4" "$tmp/act.log" && break
        wait "$act_pid"
        act_pid=""
    done
    cp "$tmp/act.log" "$tmp/err"
    check "systemd-socket-activate listens on the unit's socket and a TCP port" \
        sh -c '[ -n "$0" ] && grep -q "as 4" "$1"' "$act_pid" "$tmp/act.log"
    curl -sS --max-time 10 --unix-socket "$sock" http://localhost/v1/tokens/web \
        >"$tmp/out" 2>"$tmp/err"
    check "the activated agent answers the token on the unit's socket" \
        grep -q "\"token\":\"$token\"" "$tmp/out"
    status=$(curl -sS --max-time 10 -o "$tmp/out" -w '%{http_code}' \
        "http://127.0.0.1:$port/healthz" 2>"$tmp/err")
    check "a passed TCP socket is TCP: no key, 401" [ "$status" = 401 ]
    printf 'header = "Authorization: Bearer %s"\n' "$(cat "$XDG_CONFIG_HOME/rampart/agent.key")" |
        curl -sS --max-time 10 -K - "http://127.0.0.1:$port/v1/tokens/web" >"$tmp/out" 2>"$tmp/err"
    check "with the key, the token over the passed TCP socket" \
        grep -q "\"token\":\"$token\"" "$tmp/out"
    kill -TERM "$act_pid"
    wait "$act_pid"
    status=$?
    act_pid=""
    cp "$tmp/act.log" "$tmp/err"
    check "SIGTERM stops it cleanly (0) after serving the passed sockets" sh -c \
        '[ "$0" -eq 0 ] && grep -q "listening on unix:$1" "$2" && grep -q "stopped (SIGTERM)" "$2"' \
        "$status" "$sock" "$tmp/act.log"
    check "the passed socket file is left to its owner" test -S "$sock"
    check "the token never reaches the log" sh -c '! grep -q "$0" "$1"' "$token" "$tmp/act.log"

    # A passed socket in a directory others may write is refused like --listen's.
    mkdir -p "$tmp/open"
    chmod 777 "$tmp/open"
    # shellcheck disable=SC2086 # as above
    systemd-socket-activate -l "$tmp/open/agent.sock" $activate_env $dest$exec_start \
        2>"$tmp/act.log" &
    act_pid=$!
    i=0
    while [ ! -S "$tmp/open/agent.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    curl -sS --max-time 10 --unix-socket "$tmp/open/agent.sock" http://localhost/healthz \
        >/dev/null 2>&1
    wait "$act_pid"
    status=$?
    act_pid=""
    cp "$tmp/act.log" "$tmp/err"
    check "a passed socket in a directory others can write: refused, 2" \
        refused 2 "can be written by others"
else
    echo "ok - socket activation # SKIP systemd-socket-activate is not installed"
fi
LISTEN_FDS=x sh -c 'LISTEN_PID=$$ exec "$0" agent' "$inst" >"$tmp/out" 2>"$tmp/err"
status=$?
check "a bad LISTEN_FDS for this process: refused, 2" refused 2 "LISTEN_FDS"
sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" agent 3</dev/null' "$inst" >"$tmp/out" 2>"$tmp/err"
status=$?
check "a passed fd that is not a socket: refused, 2" refused 2 "fd 3 is not a socket"
"$inst" agent --listen fd:1 >"$tmp/out" 2>"$tmp/err"
status=$?
check "--listen fd:1 (standard output, not a socket): refused, 2" \
    refused 2 "fd 1 is not a socket"

# ---- uninstall ----
make_target uninstall
find "$dest" ! -type d >"$tmp/out"
check "make uninstall removes every installed file" sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ]' \
    "$status" "$tmp/out"

# ---- a package's layout: DESTDIR, PREFIX, BINDIR and MANDIR each given ----
dest="$tmp/pkgroot"
layout="PREFIX=/opt/rampart BINDIR=/usr/sbin MANDIR=/usr/share/man"
# shellcheck disable=SC2086 # the settings are words
make_in install $layout
check "make install DESTDIR=… $layout succeeds" status_is 0
# path mode: what must be there, and nothing else.
cat >"$tmp/expected" <<EOF
/opt/rampart/lib/systemd/user/rampart-agent.service 644
/opt/rampart/lib/systemd/user/rampart-agent.socket 644
/opt/rampart/lib/systemd/user/rampart-sync.service 644
/opt/rampart/lib/systemd/user/rampart-sync.timer 644
/opt/rampart/share/bash-completion/completions/rampart 644
/opt/rampart/share/doc/rampart/config.example 644
/opt/rampart/share/doc/rampart/nginx-fleet.conf 644
/opt/rampart/share/zsh/site-functions/_rampart 644
/usr/sbin/rampart 755
/usr/share/man/man1/rampart.1 644
EOF
(cd "$dest" && find . ! -type d -exec stat -c '%n %a' {} + | sed 's|^\.||' | sort) >"$tmp/out"
check "every file where asked, with its mode, and nothing else under DESTDIR" \
    cmp -s "$tmp/expected" "$tmp/out"
check "each file's directory is 0755" sh -c \
    'while read -r f m; do [ "$(stat -c %a "$0${f%/*}")" = 755 ] || exit 1; done <"$1"' \
    "$dest" "$tmp/expected"
check "the service unit runs BINDIR's binary: ExecStart=/usr/sbin/rampart agent" \
    grep -qx "ExecStart=/usr/sbin/rampart agent" \
    "$dest/opt/rampart/lib/systemd/user/rampart-agent.service"
check "... and the sync unit: ExecStart=/usr/sbin/rampart sync --timeout 3600" \
    grep -qx "ExecStart=/usr/sbin/rampart sync --timeout 3600" "$dest/opt/rampart/lib/systemd/user/rampart-sync.service"
"$dest/usr/sbin/rampart" --version >"$tmp/out" 2>"$tmp/err"
status=$?
check "the binary installed in BINDIR runs" status_is 0
# shellcheck disable=SC2086 # as above
make_in uninstall $layout
find "$dest" ! -type d >"$tmp/out"
check "make uninstall with the same settings removes every file" \
    sh -c '[ "$0" -eq 0 ] && [ ! -s "$1" ]' "$status" "$tmp/out"
