#!/bin/sh
# --sandbox: a private reference server per run, its own cache, nothing left behind.
. "$(dirname "$0")/lib.sh"

run --sandbox rules create --cidr 10.0.0.0/8 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a \
    --action allow --sync
check "sandbox: create --sync reaches its server" out_has "^state  *synced"
run --sandbox creds create --description demo --sync
check "sandbox: a credential's token is printed once" out_has "^token: "
run --sandbox sync
check "sandbox: a later run finds the sandbox as it was (converged)" status_is 0
check "... with the rule and credential still there" out_has "remote has 1 rules, 1 credentials"
run --sandbox status
check "sandbox: status names the sandbox key source" out_has "API key from sandbox"
check "sandbox: its cache is separate" out_has "/sandbox/cache.db"
run status
check "the normal cache was not touched (none was made)" \
    sh -c '[ "$0" -eq 1 ] && grep -q "no cache at" "$1"' "$status" "$tmp/err"
dir="$XDG_DATA_HOME/rampart/sandbox"
check "sandbox files are private (0600)" \
    [ "$(stat -c %a "$dir/remote.db")" = 600 ] && [ "$(stat -c %a "$dir/cache.db")" = 600 ]
# Each run waits for its own ready file: a run's server stopping (an agent's, on
# SIGTERM) unlinks its file, and must not take away the one another run waits for.
# A directory where a shared file would be makes that wait fail every time.
mkdir "$dir/ready"
run --sandbox status
check "a run starts its server while another run's ready path is taken" status_is 0
check "... and leaves no ready file of its own behind" \
    sh -c '! ls "$0"/ready.* >/dev/null 2>&1' "$dir"
rmdir "$dir/ready"
no_server() { ! pgrep -f "$dir/remote.db" >/dev/null; }
check "no sandbox server is left running" no_server
RAMPART_DB="$tmp/real.db" run --sandbox rules create --cidr 10.9.0.0/16 \
    --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a --action deny --sync
check "with RAMPART_DB set, --sandbox still uses its own cache" out_has "^state  *synced"
RAMPART_DB="$tmp/real.db" run rules list
check "... and the real cache got nothing from the sandbox (none was made)" \
    err_has "no cache at $tmp/real.db"

# ---- the server's environment: built, not inherited -----------------------------------
# The real key, URL and settings are in rampart's environment; the sandbox's serve-api
# child must get none of them (nor HOME: it reads no config file), only its own key.
# Read from /proc/CHILD/environ: rampart's processes are not dumpable, so only root
# can read it.
secret=sk_known_secret_$$_do_not_leak
(
    export RAMPART_API_KEY="$secret" RAMPART_API_URL=https://elsewhere.example \
        RAMPART_VERSION_HEADER=X-Elsewhere
    exec "$RAMPART" --sandbox agent --listen "unix:$tmp/sandbox-agent.sock" \
        --ready-file "$tmp/sandbox-agent.ready"
) 2>"$tmp/sandbox-agent.log" &
agent=$!
i=0
while [ ! -s "$tmp/sandbox-agent.ready" ] && [ $i -lt 200 ] && kill -0 "$agent" 2>/dev/null; do
    sleep 0.05 # polling for the ready file
    i=$((i + 1))
done
child=$(awk -v p="$agent" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -n 1)
if [ -n "$child" ] && tr '\0' '\n' <"/proc/$child/environ" >"$tmp/child.env" 2>/dev/null &&
    tr '\0' '\n' <"/proc/$agent/environ" >"$tmp/parent.env" 2>/dev/null; then
    cp "$tmp/child.env" "$tmp/out"
    check "sandbox child: found, and the command itself has the real key" \
        grep -q "^RAMPART_API_KEY=$secret\$" "$tmp/parent.env"
    check "sandbox child: not the real RAMPART_API_KEY" sh -c '! grep -q "$0" "$1"' \
        "$secret" "$tmp/child.env"
    check "sandbox child: no RAMPART_* setting but its own key" \
        sh -c '[ "$(grep -c "^RAMPART_" "$0")" = 1 ] && grep -q "^RAMPART_SERVE_API_KEY=" "$0"' \
        "$tmp/child.env"
    check "sandbox child: no HOME or XDG_* (no config file to read)" \
        sh -c '! grep -q -e "^HOME=" -e "^XDG_" "$0"' "$tmp/child.env"
    check "sandbox child: PATH kept" grep -q "^PATH=" "$tmp/child.env"
else
    skip "sandbox child's environment" "needs root to read /proc/PID/environ of a non-dumpable process"
fi
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
checks_done
