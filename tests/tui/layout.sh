#!/bin/sh
# Headless (`rampart tui --headless SCRIPT`): `:check` (the same decision and rule
# as `rampart check`, the policy from the row or the only cached one, the reasons
# it refuses) and what an empty view says (create, sync, import; a filter that
# hides every row; read-only), and the key bar of each view at 80 and 60 columns.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

# play DB NAME [OPTIONS]: run the script $tmp/NAME.keys (from stdin) headless.
play() { headless_play "$@"; }
# the screen's status area (its last two rows: a message may wrap onto two)
status_has() {
    tail -n 2 "$tmp/screen.$1" | sed 's/^ *//; s/ *$//' | tr '\n' ' ' | grep -F -q -- "$2"
}
last_row() { tail -n 1 "$tmp/screen.$1" | grep -F -q -- "$2"; }
last_row_is() { [ "$(tail -n 1 "$tmp/screen.$1" | sed 's/ *$//')" = "$2" ]; }

rules() { # DB JSON
    printf '%s\n' "$2" >"$tmp/rules.json"
    "$RAMPART" --db "$1" rules import "$tmp/rules.json" >/dev/null || fail "import"
}
two="$tmp/two.db"
rules "$two" '[{"cidr":"10.0.0.0/8","ip_policy_id":"ipp_alpha01","action":"allow"},
 {"cidr":"10.1.2.0/24","ip_policy_id":"ipp_alpha01","action":"deny"},
 {"cidr":"2001:db8::/32","ip_policy_id":"ipp_beta001","action":"allow"}]'
one="$tmp/one.db"
rules "$one" '[{"cidr":"192.168.0.0/16","ip_policy_id":"ipp_gamma01","action":"allow"}]'

# ---- :check ----
play "$two" check <<'EOF2'
key :
type check 10.1.2.3 ipp_alpha01
key <Enter>
dump
key :
type check 10.200.0.1 ipp_alpha01
key <Enter>
dump
key :
type check 8.8.8.8 ipp_alpha01
key <Enter>
dump
key :
type check 10.1.2.3 ipp_nothere1
key <Enter>
dump
key :
type check 10.1.2.x ipp_alpha01
key <Enter>
dump
key :
type check 10.1.2.3 abc
key <Enter>
dump
key /
type zzz-no-such
key <Enter>
key :
type check 10.1.2.3
key <Enter>
dump
key <Esc> G
key :
type check 2001:db8::1
key <Enter>
dump
key :
type check
key <Enter>
dump
EOF2
check "check: exit 0" [ "$status" = 0 ]
"$RAMPART" --db "$two" check ipp_alpha01 10.1.2.3 >"$tmp/cli" 2>&1
rule=$(awk 'NR == 2 { print $5 }' "$tmp/cli")
check "check: the CLI names the deny rule" [ -n "$rule" ]
check "check: denied by the /24, as the CLI says" \
    status_has 1 "10.1.2.3: denied in ipp_alpha01 by deny rule 10.1.2.0/24 $rule (pending)"
check "check: allowed by the /8" status_has 2 "10.200.0.1: allowed in ipp_alpha01 by allow rule 10.0.0.0/8"
check "check: no rule contains it" \
    status_has 3 "8.8.8.8: denied in ipp_alpha01: no rule of the policy contains it"
check "check: a policy with no rules here" \
    status_has 4 "the policy has no rules in force in this cache, so nothing is allowed"
check "check: a bad address, the parser's reason" \
    status_has 5 ":check 10.1.2.x: not an IPv4 or IPv6 address"
check "check: a bad policy id, the validator's reason" status_has 6 ":check: policy id must start with ipp_"
check "check: no row, two policies: the policy is needed" status_has 7 ":check needs a policy"
check "check: the row's policy (the IPv6 rule's)" \
    status_has 8 "2001:db8::1: allowed in ipp_beta001 by allow rule 2001:db8::/32"
check "check: no address" status_has 9 "which address?"

play "$one" only <<'EOF2'
key /
type zzz-no-such
key <Enter>
key :
type check 192.168.3.4
key <Enter>
dump
EOF2
check "check: the only cached policy" \
    status_has 1 "192.168.3.4: allowed in ipp_gamma01 by allow rule 192.168.0.0/16"

# ---- the empty screen and the key bar ----
empty="$tmp/empty.db"
play "$empty" empty <<'EOF2'
dump
key 2
dump
key 1 / n o p e <Enter>
dump
key <Esc> 3
dump
resize 60x14
key 1
dump
EOF2
check "empty: exit 0" [ "$status" = 0 ]
check "empty: no rules yet" screen 1 "No rules in this cache yet."
check "empty: create, with the keymap's key" screen 1 "c  create one here"
check "empty: sync" screen 1 "s  sync: pull the rules the remote has"
check "empty: import with the CLI" screen 1 "rampart rules import FILE"
check "empty: the rules view's key bar" \
    last_row_is 1 " ? help  q quit  c create  / filter  s sync  e edit  d delete  Space mark+down"
check "empty creds: no credentials yet" screen 2 "No credentials in this cache yet."
check "empty creds: no import line (credentials have none)" no_screen 2 "import"
check "empty creds: the credentials view's key bar has t" last_row 2 "t token"
check "empty + filter: says the filter" screen 3 'No rows match the filter "nope" (Esc clears it).'
check "empty + filter: not the first-screen text" no_screen 3 "No rules in this cache yet."
check "pending: its own keys (no create)" no_screen 4 "c create"
check "pending: delete, mark and undo" last_row 4 "d delete  Space mark+down  u undo"
check "60x14: the key bar cut at a whole key" \
    last_row_is 5 " ? help  q back  c create  / filter  s sync  e edit"

play "$empty" readonly --readonly <<'EOF2'
dump
EOF2
check "read-only: no rules yet" screen 1 "No rules in this cache yet."
check "read-only: no create offered" no_screen 1 "create"
check "read-only: no sync offered" no_screen 1 "sync"

play "$two" details <<'EOF2'
key <Enter>
dump
EOF2
check "details: the box's own keys" last_row_is 1 " q close  j down  k up  PgDn page  Q quit"
checks_done
exit 0
