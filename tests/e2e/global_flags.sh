#!/bin/sh
# The global options (--profile, --db, --sandbox, the refusal of --api-key) anywhere on
# the line, as kubectl and gh take them: before the command, after it, between a group
# and its subcommand. A value is its option's whatever it looks like; words after "--"
# are operands; serve-api's --db is still the server's own database.
. "$(dirname "$0")/lib.sh"
unset RAMPART_PROFILE RAMPART_POLICY
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"' \
    EXIT INT TERM

cfg="$XDG_CONFIG_HOME/rampart/config"
mkdir -p "$XDG_CONFIG_HOME/rampart"
cat >"$cfg" <<CFG
db = $tmp/default.db

[profile.staging]
db = $tmp/staging.db
CFG
P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a

# ---- --profile after the command ----
run rules create --cidr 10.0.0.0/8 --policy $P --action allow --profile staging
check "rules create ... --profile staging: accepted" status_is 0
check "... the rule went to the staging profile's cache" \
    sh -c '[ -e "$0" ] && [ ! -e "$1" ]' "$tmp/staging.db" "$tmp/default.db"
run status --profile staging
check "status --profile staging: the staging profile" \
    sh -c '[ "$0" -eq 0 ] && grep -q "^profile  *staging" "$1"' "$status" "$tmp/out"
run status --json --profile=staging
check "status --json --profile=staging (the = form)" out_has '"profile": "staging"'
run rules --profile staging list -o name
check "rules --profile staging list: between the group and its subcommand" \
    sh -c '[ "$0" -eq 0 ] && [ "$(wc -l <"$1")" -eq 1 ]' "$status" "$tmp/out"
run --profile nosuch rules list --profile staging -o name
check "given twice, the last --profile counts" \
    sh -c '[ "$0" -eq 0 ] && [ "$(wc -l <"$1")" -eq 1 ]' "$status" "$tmp/out"
run rules list --profile
check "--profile without a value at the end: exit 2, says what is missing" \
    refused 2 "option '--profile' needs a value"
run rules list --profile nosuch
check "--profile nosuch after the command: exit 2, naming the profiles there are" \
    refused 2 "unknown profile 'nosuch' (profiles in .*: default, staging)"
run rules --profile
check "rules --profile (no subcommand): the overview, exit 2" \
    sh -c '[ "$0" -eq 2 ] && grep -q "^Commands:" "$1"' "$status" "$tmp/out"

# ---- a value and "--" are never global options ----
run rules create --cidr 10.1.0.0/16 --policy $P --action allow --description --profile
check "--description --profile: the description, no profile asked for" \
    sh -c '[ "$0" -eq 0 ] && [ -e "$1" ]' "$status" "$tmp/default.db"
run rules list --json
check "... in the default profile's cache, described '--profile'" \
    out_has '"description": *"--profile"'
run rules list -- --profile staging
check "words after --: operands, never --profile (exit 2)" \
    refused 2 "unexpected argument '--profile'"
run rules create --cidr 10.2.0.0/16 --policy $P --action deny --description --sandbox
check "--description --sandbox: a description, no sandbox started" \
    sh -c '[ "$0" -eq 0 ] && [ ! -e "$1" ]' "$status" "$tmp/sandbox"
run check $P 10.1.2.3 -- --db
check "check ... -- --db: an address, not the option" refused 2 "address #2"

# ---- --sandbox after the command ----
run rules create --cidr 192.0.2.0/24 --policy $P --action allow --sync --sandbox
check "rules create ... --sync --sandbox: sent to the sandbox's server" \
    out_has "^state  *synced"
run rules list --sandbox -o name
check "rules list --sandbox: the sandbox's cache" \
    sh -c '[ "$0" -eq 0 ] && grep -q "^ipr_" "$1" && [ "$(wc -l <"$1")" -eq 1 ]' \
    "$status" "$tmp/out"
run --sandbox rules list --db "$tmp/sb/cache.db" -o name
check "--sandbox before, --db after: the --db's cache (none there yet)" \
    refused 1 "no cache at $tmp/sb/cache.db"
run sync --db "$tmp/sb/cache.db" --sandbox
check "sync --db FILE --sandbox: converges" status_is 0
check "... its server's files beside that --db" [ -e "$tmp/sb/sandbox/remote.db" ]

# ---- the API key is refused anywhere, never echoed ----
for line in "rules list --api-key=sk_argv_secret" "rules --api-key=sk_argv_secret list" \
    "status --api-key sk_argv_secret"; do
    # shellcheck disable=SC2086 # the words of the line
    run $line
    check "$line: refused (exit 2)" refused 2 "never taken from the command line"
    check "$line: the key is not echoed" err_lacks sk_argv_secret
done

# ---- serve-api --db: the server's own database ----
RAMPART_SERVE_API_KEY=sk_serve_$$ "$RAMPART" serve-api --listen tcp:127.0.0.1:0 \
    --profile staging --db "$tmp/server.db" --ready-file "$tmp/ready" 2>"$tmp/server.log" &
pids="$pids $!"
n=0
while [ ! -s "$tmp/ready" ] && [ $n -lt 500 ]; do
    n=$((n + 1))
    sleep 0.02 # polling for the ready file
done
url="http://$(cat "$tmp/ready")"
check "serve-api --profile staging --db FILE: listening" [ -s "$tmp/ready" ]
RAMPART_API_URL=$url RAMPART_API_KEY=sk_serve_$$ run rules create --cidr 198.51.100.0/24 \
    --policy $P --action deny --sync --db "$tmp/client.db"
check "... a client's rule reaches it" out_has "^state  *synced"
run rules list --profile staging -o name
check "... kept in its --db, the profile's cache untouched (its one rule)" \
    sh -c '[ -s "$0" ] && [ "$(wc -l <"$1")" -eq 1 ]' "$tmp/server.db" "$tmp/out"
RAMPART_SERVE_API_KEY=sk_serve_$$ run serve-api --listen tcp:127.0.0.1:0 --profile staging
check "serve-api without --db: refused though the profile names a cache" \
    refused 2 "\-\-db FILE is required"

for line in "serve-api --listen tcp:127.0.0.1:0 --db $tmp/s2/s2.db --sandbox" \
    "--sandbox serve-api --listen tcp:127.0.0.1:0 --db $tmp/s2/s2.db"; do
    # A server that started anyway is stopped at the deadline (exit 124).
    # shellcheck disable=SC2086 # the words of the line
    RAMPART_SERVE_API_KEY=sk_serve_$$ timeout 20 "$RAMPART" $line >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "$line: refused, it is a server itself" refused 2 "serve-api is one itself"
done
check "... no sandbox started beside its --db" [ ! -e "$tmp/s2/sandbox" ]

# ---- completion still offers them after the command ----
run --sandbox __complete policy-id ipp_
check "--sandbox __complete: from the sandbox's cache, as __complete --sandbox" \
    sh -c '[ "$(cat "$0")" = "$1" ] && "$2" __complete --sandbox policy-id ipp_ | cmp -s - "$0"' \
    "$tmp/out" "$P" "$RAMPART"
run __complete options status
check "__complete options status: --profile= and --sandbox among its options" \
    sh -c 'grep -qx -e "--profile=" "$0" && grep -qx -e "--sandbox" "$0" &&
           grep -qx -e "--db=" "$0"' "$tmp/out"
run status --help
check "a command's --help names the global options" \
    sh -c 'grep -q -e "--profile NAME" "$0" && grep -q -e "--sandbox" "$0"' "$tmp/out"
run serve-api --help
check "serve-api --help: no global --sandbox, its own refuses it" \
    sh -c '! sed -n "/^Global options/,\$p" "$0" | grep -q -e "--sandbox"' "$tmp/out"
checks_done
