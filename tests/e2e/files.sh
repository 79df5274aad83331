#!/bin/sh
# The files rampart trusts, with real files, modes, owners and processes: the cache
# and its -wal/-shm, the config file, the agent's key and the agent socket's
# directory. Each is refused when another user owns it or (for what holds a
# secret) when group or others may read or write it, with the chmod (or chown) to
# run; the socket directory /tmp/rampart-UID made first by another user is refused
# by the agent and by doctor (the client side). Owners are changed with chown, so
# those checks need root; they say "skipped" otherwise.
here=$(dirname "$0")
. "$here/lib.sh"
unset XDG_RUNTIME_DIR
P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
DB="$tmp/cache.db"
root=""
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && root=1
skip_unless_root() { skip "$1" "needs root to chown to another uid"; }

run --db "$DB" rules create --cidr 10.0.0.0/8 --policy $P --action allow
check "setup: a cache, 0600" [ "$(stat -c %a "$DB")" = 600 ]

# ---- the cache --------------------------------------------------------------------------
chmod 644 "$DB"
run --db "$DB" rules list
check "cache 0644, a read: refused, exit 2, with the chmod and why" refused 2 \
    "$DB is readable by others (mode 0644): run 'chmod 600 $DB'; rampart refuses a cache that others can read: it holds tokens"
run --db "$DB" rules create --cidr 10.1.0.0/16 --policy $P --action allow
check "cache 0644, a write: refused" refused 2 "chmod 600"
check "cache 0644: left as it was (no -wal made)" \
    sh -c '[ ! -e "$0-wal" ] && [ "$(stat -c %a "$0")" = 644 ]' "$DB"
chmod 660 "$DB"
run --db "$DB" status
check "cache 0660: can be written by others, refused" refused 2 "can be written by others (mode 0660)"
chmod 600 "$DB"
run --db "$DB" rules list
check "cache 0600 again: listed" out_has "10.0.0.0/8"

for f in wal shm; do
    : >"$DB-$f"
    chmod 644 "$DB-$f"
    run --db "$DB" rules list
    check "cache -$f 0644: refused, names it" refused 2 "$DB-$f is readable by others (mode 0644)"
    chmod 600 "$DB-$f"
done
run --db "$DB" rules list
check "-wal and -shm 0600: listed" out_has "10.0.0.0/8"

if [ -n "$root" ]; then
    chown 65534:65534 "$DB"
    run --db "$DB" rules list
    check "cache of another user: refused, says whose and the chown" refused 2 \
        "$DB belongs to another user (uid 65534; you are uid 0): if it is yours, run 'chown 0 $DB' as root"
    chown 0:0 "$DB"
else
    skip_unless_root "cache of another user"
fi

# ---- the config file: the same rule, the same sentence --------------------------------
mkdir -p "$XDG_CONFIG_HOME/rampart"
cfg="$XDG_CONFIG_HOME/rampart/config"
printf 'api_url = https://api.example.com\napi_key = sk_files_not_printed\n' >"$cfg"
chmod 640 "$cfg"
run --db "$DB" status
check "config with api_key, 0640: refused with the chmod and why" refused 2 \
    "$cfg is readable by others (mode 0640): run 'chmod 600 $cfg'; rampart refuses a config file holding api_key that others can read: it holds the API key"
check "... the key not echoed" err_lacks sk_files_not_printed
chmod 600 "$cfg"
run --db "$DB" status
check "config 0600: taken" out_has "API key from config file"
if [ -n "$root" ]; then
    chown 65534:65534 "$cfg"
    run --db "$DB" status
    check "config of another user: refused" refused 2 "$cfg belongs to another user (uid 65534"
    chown 0:0 "$cfg"
else
    skip_unless_root "config of another user"
fi
rm -f "$cfg"

# ---- the agent's key ----------------------------------------------------------------------
mkdir -p "$tmp/keys" && chmod 700 "$tmp/keys"
printf '0123456789abcdef0123456789abcdef\n' >"$tmp/keys/a.key"
chmod 640 "$tmp/keys/a.key"
run --db "$DB" agent --listen tcp:127.0.0.1:0 --key-file "$tmp/keys/a.key"
check "agent key 0640: refused with the chmod" refused 2 \
    "$tmp/keys/a.key is readable by others (mode 0640): run 'chmod 600 $tmp/keys/a.key'"

# ---- the agent socket's directory ------------------------------------------------------------
# As anyone: XDG_RUNTIME_DIR/rampart a link elsewhere, or writable by others.
mkdir -p "$tmp/xdg" "$tmp/elsewhere" && chmod 700 "$tmp/xdg" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$tmp/xdg/rampart"
XDG_RUNTIME_DIR="$tmp/xdg" run --db "$DB" agent
check "socket directory a symbolic link: refused, exit 2" refused 2 \
    "$tmp/xdg/rampart is a symbolic link, not a socket directory of yours"
XDG_RUNTIME_DIR="$tmp/xdg" run --db "$DB" doctor
check "... doctor (a client) refuses it too" \
    grep -q "^FAIL  socket directory  .*is a symbolic link" "$tmp/out"
rm "$tmp/xdg/rampart"
mkdir "$tmp/xdg/rampart" && chmod 777 "$tmp/xdg/rampart"
XDG_RUNTIME_DIR="$tmp/xdg" run --db "$DB" agent
check "socket directory 0777: refused with the chmod" refused 2 \
    "$tmp/xdg/rampart can be written by others (mode 0777): run 'chmod 700 $tmp/xdg/rampart'"

# The squat itself, as it would happen: another user (here root) makes
# /tmp/rampart-UID first for a user (here nobody, 65534) without XDG_RUNTIME_DIR.
squat=/tmp/rampart-65534
if [ -n "$root" ] && [ ! -e "$squat" ] && [ ! -L "$squat" ]; then
    other=$(mktemp -d "${TMPDIR:-/tmp}/rampart-files-other.XXXXXX")
    chown 65534:65534 "$other"
    # rampart as uid 65534 without XDG_RUNTIME_DIR, one process (setpriv and env
    # exec it: $! of a background one is rampart's pid). Paths made by mktemp.
    nobody="setpriv --reuid 65534 --regid 65534 --clear-groups env -u XDG_RUNTIME_DIR
        HOME=$other XDG_DATA_HOME=$other/data XDG_CONFIG_HOME=$other/config
        $RAMPART --db $other/c.db"
    # shellcheck disable=SC2086 # $nobody is words
    as_nobody() {
        $nobody "$@" >"$tmp/out" 2>"$tmp/err"
        status=$?
    }
    mkdir -m 755 "$squat"
    as_nobody agent
    check "/tmp/rampart-UID made first by another user: the agent refuses it, exit 2" \
        refused 2 "$squat belongs to another user (uid 0; you are uid 65534)"
    check "... and says what to do" err_has "set XDG_RUNTIME_DIR to a directory of yours"
    as_nobody doctor
    check "... doctor (a client) refuses it too, exit 1" \
        sh -c 'grep -q "^FAIL  socket directory  .*$1 belongs to another user" "$0" &&
               [ "$2" = 1 ]' "$tmp/out" "$squat" "$status"
    rmdir "$squat"
    ln -s "$other" "$squat" # a link to a directory of the victim's: still not theirs to use
    as_nobody agent
    check "/tmp/rampart-UID a link made by another user: refused" refused 2 "is a symbolic link"
    rm "$squat"
    # shellcheck disable=SC2086 # $nobody is words
    $nobody agent --ready-file "$other/ready" 2>"$tmp/err" &
    agent=$!
    i=0
    while [ ! -s "$other/ready" ] && [ $i -lt 200 ] && kill -0 "$agent" 2>/dev/null; do
        sleep 0.05 # polling for the ready file
        i=$((i + 1))
    done
    check "no squat: the agent makes /tmp/rampart-UID itself, 0700, its own" \
        sh -c '[ -s "$0/ready" ] && [ "$(stat -c "%a %u" "$1")" = "700 65534" ]' "$other" "$squat"
    kill "$agent" 2>/dev/null
    wait "$agent"
    check "... and stops cleanly on SIGTERM" [ $? = 0 ]
    rm -rf "$squat" "$other"
elif [ -n "$root" ]; then
    skip "/tmp/rampart-UID squat" "$squat exists already; not touching it"
else
    skip_unless_root "/tmp/rampart-UID squat"
fi

# ---- a FIFO where a file belongs: refused at once, never waited on ---------------------------
# (an outer `timeout -s KILL` that had to kill a run exits 137)
mkfifo -m 600 "$tmp/fifo"
ended() { [ "$status" -ne 137 ]; }
timeout -s KILL 10 env RAMPART_CONFIG="$tmp/fifo" "$RAMPART" rules list >"$tmp/out" 2>"$tmp/err"
status=$?
check "a FIFO as RAMPART_CONFIG: refused at once" sh -c '[ "$0" -eq 2 ] && grep -q "not a regular file" "$1"' "$status" "$tmp/err"
timeout -s KILL 10 "$RAMPART" --db "$tmp/fifo" rules list >"$tmp/out" 2>"$tmp/err"
status=$?
check "a FIFO as the cache: refused at once" sh -c '[ "$0" -eq 2 ] && grep -q "not a regular file" "$1"' "$status" "$tmp/err"
timeout -s KILL 10 "$RAMPART" --db "$tmp/fifo-agent.db" agent --key-file "$tmp/fifo" \
    --listen tcp:127.0.0.1:0 >"$tmp/out" 2>"$tmp/err"
status=$?
check "a FIFO as the agent's key file: refused at once" sh -c '[ "$0" -ne 137 ] && grep -q "not a regular file" "$1"' "$status" "$tmp/err"
timeout -s KILL 10 "$RAMPART" serve-api --listen tcp:127.0.0.1:0 --db "$tmp/fifo-srv.db" \
    --api-key-file "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
status=$?
check "a FIFO as serve-api's key file: refused at once" sh -c '[ "$0" -eq 2 ] && grep -q "not a regular file" "$1"' "$status" "$tmp/err"
checks_done
