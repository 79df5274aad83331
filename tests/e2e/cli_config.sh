#!/bin/sh
# Configuration: XDG paths, precedence (file < env < flag), unsafe files, status.
. "$(dirname "$0")/lib.sh"

run status
check "status: default database under XDG_DATA_HOME" out_has "$XDG_DATA_HOME/rampart/rampart.db"
check "status: no remote configured" out_has "not configured"
check "status: version header default" out_has "Service-Version"

mkdir -p "$XDG_CONFIG_HOME/rampart"
cfg="$XDG_CONFIG_HOME/rampart/config"
cat >"$cfg" <<CFG
# rampart settings
db = $tmp/from-file.db
api_url = "https://api.example.com"
version_header = X-Brand-Version
CFG
run status
check "config file: db path" out_has "$tmp/from-file.db"
check "config file: version header" out_has "X-Brand-Version"
check "config file without a key: remote not configured" out_has "not configured"

RAMPART_DB="$tmp/from-env.db" run status
check "env overrides the file" out_has "$tmp/from-env.db"
RAMPART_DB="$tmp/from-env.db" run --db "$tmp/from-flag.db" status
check "flag overrides env" out_has "$tmp/from-flag.db"
RAMPART_DB="$tmp/from-env.db" run status --db "$tmp/from-flag2.db"
check "flag after the command too" out_has "$tmp/from-flag2.db"

chmod 666 "$cfg"
run status
check "config file others can write: refused" refused 2 "chmod go-w"
chmod 644 "$cfg"
echo "api_key = sk_test_do_not_print" >>"$cfg"
chmod 644 "$cfg"
run status
check "config file with a key, mode 644: refused" refused 2 "chmod 600"
check "... and the key is not echoed" err_lacks sk_test_do_not_print
chmod 600 "$cfg"
run status
check "mode 600: remote configured" out_has "https://api.example.com (API key from config file)"
check "status never prints the key" out_lacks "sk_test_do_not_print"
run status --json
check "status --json" out_has '"remote_configured": true'
check "status --json never prints the key" out_lacks "sk_test_do_not_print"

echo "colour = blue" >>"$cfg"
run status
check "unknown setting: refused with line number" refused 2 "config:6: unknown setting 'colour'"
printf 'db = %s\n' "$tmp/x.db" >"$cfg"
RAMPART_RATE=fast run status
check "bad RAMPART_RATE: refused" refused 2 "RAMPART_RATE"
# The sync's budget and deadlines: each whole number refused out of its range, naming
# the setting and the range, from the environment, the config file and sync's flags.
# A cache for the status runs below to read (status refuses a cache that is not there).
"$RAMPART" --db "$tmp/x.db" rules create --cidr 10.0.0.0/8 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a \
    --action allow >/dev/null 2>&1
for spec in rate:RAMPART_RATE:0:100000 window:RAMPART_WINDOW:1:3600 \
    share:RAMPART_SHARE:1:100 give_up_windows:RAMPART_GIVE_UP_WINDOWS:1:100 \
    timeout:RAMPART_TIMEOUT:0:604800 low_speed:RAMPART_LOW_SPEED:0:1000000000 \
    low_speed_time:RAMPART_LOW_SPEED_TIME:1:3600 max_backoff:RAMPART_MAX_BACKOFF:1:3600 \
    auto_pull:RAMPART_AUTO_PULL:0:604800; do
    IFS=: read -r key var min max <<SPEC
$spec
SPEC
    printf 'db = %s\n' "$tmp/x.db" >"$cfg"
    env "$var=$((max + 1))" "$RAMPART" status >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "$var above its range: refused with name and range" \
        refused 2 "$var: $key must be a whole number .* from $min to $max"
    env "$var=$max" "$RAMPART" status >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "$var at its maximum: taken" status_is 0
    printf 'db = %s\n%s = %s\n' "$tmp/x.db" "$key" "$((min - 1))" >"$cfg"
    run status
    check "$key below its range in the file: refused with line, name and range" \
        refused 2 "config:2: $key must be a whole number .* from $min to $max"
done
printf 'db = %s\n' "$tmp/x.db" >"$cfg"
for spec in rate:rate:0:100000 window:window:1:3600 share:share:1:100 timeout:timeout:0:604800
do
    IFS=: read -r flag key min max <<SPEC
$spec
SPEC
    run sync "--$flag" "$((max + 1))"
    check "sync --$flag above its range: refused with name and range" \
        refused 2 "^rampart: --$flag: $key must be a whole number .* from $min to $max"
done
run sync --share 50%
check "sync --share 50%: refused (a whole number of percent)" refused 2 "--share: share must be"
run sync --timeout 5 --window 10 --rate 100 --share 100
check "sync with every budget flag in range, no remote: exit 2, says how" \
    refused 2 "no remote configured"
RAMPART_API_URL=ftp://example.com run status
check "bad RAMPART_API_URL: refused" refused 2 "https://"
RAMPART_API_URL=http://api.example.com run status
check "plain http to a remote host: refused" refused 2 "http:// only for a server on this machine"
env -u HOME -u XDG_DATA_HOME -u XDG_CONFIG_HOME "$RAMPART" rules list >"$tmp/out" 2>"$tmp/err"
status=$?
check "no HOME and no RAMPART_DB: says how to fix" refused 2 "set RAMPART_DB or pass --db"
env -u HOME -u XDG_DATA_HOME -u XDG_CONFIG_HOME "$RAMPART" --db "$tmp/nohome.db" rules create \
    --cidr 10.0.0.0/8 --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a --action allow >/dev/null 2>&1
env -u HOME -u XDG_DATA_HOME -u XDG_CONFIG_HOME "$RAMPART" --db "$tmp/nohome.db" status \
    >"$tmp/out" 2>"$tmp/err"
status=$?
check "no HOME but --db: works" status_is 0
RAMPART_CONFIG="$tmp/nope" run status
check "RAMPART_CONFIG naming a missing file: refused" refused 2 "$tmp/nope"

run --version
check "--version" out_has "^rampart [0-9]"
run
check "no command: status and the overview" out_has "Commands:"
run frob
check "unknown command" refused 2 "unknown command 'frob'"
run --frob
check "unknown global option" refused 2 "unknown option"
checks_done
