#!/bin/sh
# The real binary in tmux at 80x24: what an admin reads. A whole IPv6 /128 in the
# table, the cidr sort in address order, the address filter, :check, the `i`
# toggle, 60 columns, the empty first screen, and quitting at TERM=vt100 (no
# alternate screen there: the screen is cleared and the shell's prompt is back).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

if ! command -v tmux >/dev/null 2>&1; then
    fail "tmux is not installed (make deps installs it)"
    exit 1
fi

v6=2001:db8:85a3::8a2e:370:7334/128 # the store keeps the canonical form
db="$tmp/cache.db"
cat >"$tmp/rules.json" <<'JSON'
[{"cidr":"10.0.0.0/8","ip_policy_id":"ipp_alpha01","action":"allow","description":"ten"},
 {"cidr":"10.1.2.0/24","ip_policy_id":"ipp_alpha01","action":"deny","description":"lab"},
 {"cidr":"9.0.0.0/8","ip_policy_id":"ipp_alpha01","action":"allow","description":"nine"},
 {"cidr":"192.168.0.0/16","ip_policy_id":"ipp_beta001","action":"allow","description":"home"},
 {"cidr":"2001:0db8:85a3:0000:0000:8a2e:0370:7334/128","ip_policy_id":"ipp_beta001",
  "action":"allow","description":"one v6 host"}]
JSON
"$RAMPART" --db "$db" rules import "$tmp/rules.json" >/dev/null || fail "import"

# line TEXT: the screen's line number of the first line holding TEXT (0: none).
line() { tui_capture | grep -n -F -- "$1" | head -n 1 | cut -d: -f1 | grep . || echo 0; }
# in_order TEXT...: each TEXT is on the screen, each on a line below the one before.
in_order() {
    prev=0
    for t in "$@"; do
        n=$(line "$t")
        [ "$n" -gt "$prev" ] || { tui_fail_screen "$* in this order"; return 1; }
        prev=$n
    done
}

# ---- the empty first screen ----
tui_console "$tmp/empty.db"
check "empty: says there are no rules" tui_wait "No rules in this cache yet."
check "empty: create with c" tui_wait "c  create one here"
check "empty: sync with s" tui_wait "s  sync: pull the rules"
check "empty: import with the CLI" tui_wait "rampart rules import FILE"
tui_type "/nothing"
tui_keys Enter
check "empty + filter: says the filter matches nothing" \
    tui_wait 'No rows match the filter "nothing" (Esc clears it).'
tui_keys Q
check "empty: quits" tui_exited_ok

# ---- reading, sorting, filtering, checking at 80x24 ----
tui_console "$db"
check "80x24: the IPv6 /128 whole" tui_wait "$v6"
check "80x24: the key bar" tui_wait "? help  q quit  c create"
tui_type ":sort cidr"
tui_keys Enter
check "sort cidr: said" tui_wait "sort cidr asc"
check "sort cidr: address order, IPv4 before IPv6" \
    in_order "9.0.0.0/8" "10.0.0.0/8" "10.1.2.0/24" "192.168.0.0/16" "$v6"
tui_type "/10.1.2.3"
tui_keys Enter
check "filter by address: the containing /24" tui_wait "10.1.2.0/24"
check "filter by address: and the /8" tui_wait "10.0.0.0/8"
check "filter by address: not the others" tui_wait_gone "9.0.0.0/8"
tui_keys Escape
check "Esc: every row again" tui_wait "9.0.0.0/8"
tui_type ":check 10.1.2.3 ipp_alpha01"
tui_keys Enter
check ":check: the decision and the rule" tui_wait "10.1.2.3: denied in ipp_alpha01 by deny rule 10.1.2.0/24"
tui_type ":check 10.9.9.9"
tui_keys Enter
check ":check: the policy of the row under the cursor" \
    tui_wait "10.9.9.9: allowed in ipp_alpha01 by allow rule 10.0.0.0/8"
check "ids shown" tui_wait "  ID         CIDR"
tui_keys i
check "i: the id column hidden" tui_wait_gone "  ID         CIDR"
check "i: said" tui_wait "id column hidden"
tui_keys i
check "i: shown again" tui_wait "  ID         CIDR"
tui_keys g # a key clears the message: the key bar is back
tui_resize 60x24
check "60x24: the IPv6 /128 still whole" tui_wait "$v6"
check "60x24: the key bar cut at a whole key" tui_wait "? help  q quit  c create  / filter"
tui_keys Q
check "80x24: quits" tui_exited_ok

# ---- TERM=vt100, typed in a shell inside the pane ----
tui_start 80x24 xterm-256color "env PS1='READY> ' sh"
check "vt100: the shell" tui_wait "READY>"
tui_type "TERM=vt100 $RAMPART --db '$db' tui --no-agent; echo EXIT=\$?"
tui_keys Enter
check "vt100: the console opens" tui_wait "$v6"
tui_keys j j
check "vt100: works" tui_wait "rows 1-5 of 5"
tui_keys q
check "vt100: exit 0" tui_wait "EXIT=0"
check "vt100: the prompt back" tui_wait "READY> "
check "vt100: the table cleared away" tui_wait_gone "192.168.0.0/16"
checks_done
exit 0
