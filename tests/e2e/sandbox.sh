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
check "the normal cache was not touched" out_has "^total  *0  *0"
dir="$XDG_DATA_HOME/rampart/sandbox"
check "sandbox files are private (0600)" \
    [ "$(stat -c %a "$dir/remote.db")" = 600 ] && [ "$(stat -c %a "$dir/cache.db")" = 600 ]
no_server() { ! pgrep -f "$dir/remote.db" >/dev/null; }
check "no sandbox server is left running" no_server
RAMPART_DB="$tmp/real.db" run --sandbox rules create --cidr 10.9.0.0/16 \
    --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a --action deny --sync
check "with RAMPART_DB set, --sandbox still uses its own cache" out_has "^state  *synced"
RAMPART_DB="$tmp/real.db" run rules list
check "... and the real cache got nothing from the sandbox" err_has "no rules in the cache"
