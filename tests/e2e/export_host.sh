#!/bin/sh
# `rampart export`: each format checked by its real tool where it is installed
# (nft -c, nginx -t, iptables-restore --test), and decisions compared with
# `rampart check` on sampled addresses by the tools themselves: nginx answering
# requests (the address given through the realip module), the kernel's nftables
# sets in a network namespace of this test's own. Then --watch follows a real sync
# and runs --exec. (tests/unit/test_hostrules.c compares every format always.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server.sh"

P=ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a
DB="$tmp/c.db"

printf '10.0.0.0/8\n192.168.1.7\n172.16.0.0/24\n172.16.1.0/24\n2001:db8::/32\n2001:db8:dead:beef::1\n' |
    "$RAMPART" --db "$DB" apply --policy $P --action allow --name allow - >/dev/null 2>&1
printf '10.1.0.0/16\n10.2.2.2\n192.168.0.0/16\n2001:db8:dead::/48\n' |
    "$RAMPART" --db "$DB" apply --policy $P --action deny --name deny - >/dev/null 2>&1

SAMPLE="10.3.4.5 10.1.2.3 10.1.255.255 10.2.2.2 10.2.2.3 10.255.255.255 11.0.0.0 9.255.255.255
192.168.1.7 192.168.1.8 172.16.1.255 172.16.2.0 172.15.255.255 2001:db8::1 2001:db8:dead::1
2001:db8:dead:beef::1 2001:db8:ffff::1 2001:db9::1 ::1 ::ffff:10.3.4.5 ::ffff:10.1.0.1"

# expected IP: "allowed" or "denied", as rampart check decides.
expected() {
    if "$RAMPART" --db "$DB" check $P "$1" >/dev/null 2>&1; then echo allowed; else echo denied; fi
}

for f in nftables nginx iptables ip6tables json csv; do
    all=""
    [ $f = nftables ] && all=--all-ports
    run --db "$DB" export --policy $P --format $f $all --output "$tmp/out.$f"
    check "export --format $f: exit 0" status_is 0
done

# ---- nftables: never a chain that drops every new connection unasked ----
run --db "$DB" export --policy $P --format nftables --output "$tmp/unasked.nft"
check "nftables without --port, --all-ports or --no-hook: exit 2, naming the choices" \
    sh -c '[ "$0" -eq 2 ] && grep -q -- "--port PORTS" "$1" && grep -q -- "--all-ports" "$1" &&
           grep -q -- "--no-hook" "$1"' "$status" "$tmp/err"
check "... nothing written" [ ! -e "$tmp/unasked.nft" ]
run --db "$DB" export --policy $P --format nftables --no-hook
check "--no-hook: the sets and chain decide, no chain on the input hook" \
    sh -c '[ "$0" -eq 0 ] && grep -q "chain decide" "$1" && ! grep -q "hook input" "$1"' \
    "$status" "$tmp/out"
# An SSH session from an address the policy drops (11.0.0.1: no rule allows it).
SSH_CONNECTION="11.0.0.1 50000 127.0.0.1 22" run --db "$DB" export --policy $P \
    --format nftables --port 22,443 --output "$tmp/ssh.nft"
check "a guarded port 22 that drops this SSH session's client: refused, saying so" \
    sh -c '[ "$0" -eq 2 ] && grep -q "11.0.0.1 to port 22" "$1" && [ ! -e "$2" ]' \
    "$status" "$tmp/err" "$tmp/ssh.nft"
SSH_CONNECTION="11.0.0.1 50000 127.0.0.1 22" run --db "$DB" export --policy $P \
    --format nftables --port 443
check "... port 22 not guarded: written" status_is 0
SSH_CONNECTION="10.3.4.5 50000 127.0.0.1 22" run --db "$DB" export --policy $P \
    --format nftables --all-ports
check "... a client the policy allows: written" status_is 0
SSH_CONNECTION="11.0.0.1 50000 127.0.0.1 22" run --db "$DB" export --policy $P \
    --format nftables --all-ports --no-ssh-check
check "... --no-ssh-check: written" status_is 0
SSH_CLIENT="11.0.0.1 50000 22" run --db "$DB" export --policy $P --format iptables
check "iptables never hooks INPUT: written, its hint says not to send port 22 there" \
    sh -c '[ "$0" -eq 0 ] && grep -q "drops 11.0.0.1, this SSH session.s client" "$1"' \
    "$status" "$tmp/err"
run --db "$DB" export --policy $P --format iptables
check "iptables: says the IPv6 rules are elsewhere" err_has "IPv6 rules are not in the iptables export"
run --db "$DB" export --policy $P --format nginx
check "export to standard output" out_has "^deny all;"
check "nginx: every deny before the first allow" \
    [ "$(grep -n '^allow' "$tmp/out" | head -n 1 | cut -d: -f1)" -gt "$(grep -n '^deny [0-9a-f:.]*/' "$tmp/out" | tail -n 1 | cut -d: -f1)" ]
run --db "$DB" export --policy $P --format json
check "json: the rules with their state" out_has '"action": "deny", "cidr": "10.1.0.0/16", "family": 4'
run --db "$DB" export --policy ipp_2VhYfCwqPkX0n4sF5nYfW3eJzzz --format nginx --output "$tmp/none"
check "a policy with no rules: exit 3, nothing written" refused 3 "no rules in force"
check "... no file" [ ! -e "$tmp/none" ]
run --db "$DB" export --policy $P --format nginx --port 443
check "--port with nginx: usage error" refused 2 "--port, --all-ports and --no-hook go with --format nftables"
run --db "$DB" export --policy $P --format pf
check "unknown format: usage error" refused 2 "one of nftables"
run --db "$DB" export --policy $P --format nginx --watch
check "--watch without --output: usage error" refused 2 "--watch needs --output"

# ---- --output replaces only a regular file of ours, never through a link ----
out_file() { "$RAMPART" --db "$DB" export --policy $P --format nginx --output "$1" \
    >"$tmp/out" 2>"$tmp/err"; status=$?; }
printf 'old\n' >"$tmp/setid.conf"
chmod 4777 "$tmp/setid.conf"
out_file "$tmp/setid.conf"
check "--output over a 4777 file of ours: written, its mode kept without the set-id bit" \
    sh -c '[ "$0" -eq 0 ] && [ "$(stat -c %a "$1")" = 777 ] && grep -q "^allow" "$1"' \
    "$status" "$tmp/setid.conf"
printf 'target\n' >"$tmp/linked.conf"
ln -s "$tmp/linked.conf" "$tmp/link.conf"
out_file "$tmp/link.conf"
check "--output through a symbolic link: refused, the link and its target untouched" \
    sh -c '[ "$0" -eq 1 ] && grep -q "is a symbolic link" "$1" && [ -L "$2" ] &&
           [ "$(cat "$3")" = target ]' "$status" "$tmp/err" "$tmp/link.conf" "$tmp/linked.conf"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    printf 'theirs\n' >"$tmp/theirs.conf"
    chmod 666 "$tmp/theirs.conf"
    chown nobody "$tmp/theirs.conf"
    out_file "$tmp/theirs.conf"
    check "--output over another user's file: refused, the file untouched" \
        sh -c '[ "$0" -eq 1 ] && grep -q "belongs to another user" "$1" &&
               [ "$(cat "$2")" = theirs ]' "$status" "$tmp/err" "$tmp/theirs.conf"
else
    skip "--output over another user's file" "needs root to chown"
fi

# ---- nftables ----
# A --port list of 200 ports is one whole line (it was cut at 511 bytes).
run --db "$DB" export --policy $P --format nftables --port "$(seq -s, 1 200)"
check "--port with 200 ports: the dport line holds them all" \
    out_has "dport { 1,2,.*,199,200 } jump decide"
cp "$tmp/out" "$tmp/ports200.nft"
if command -v nft >/dev/null 2>&1; then
    check "nft -c accepts the 200-port export" nft -c -f "$tmp/ports200.nft"
    check "nft -c accepts the nftables export" nft -c -f "$tmp/out.nftables"
    "$RAMPART" --db "$DB" export --policy $P --format nftables --port 22,8000-8100 --name edge \
        >"$tmp/port.nft" 2>/dev/null
    check "nft -c accepts --port and --name" nft -c -f "$tmp/port.nft"
    # The kernel's sets decide, in a network namespace of this test's own.
    cat >"$tmp/nft-decide.sh" <<'EOF'
nft -f "$1" || exit 9
shift
for ip in "$@"; do
    case $ip in ::ffff:*) continue ;; *:*) fam=v6 ;; *) fam=v4 ;; esac
    if nft get element inet rampart deny_$fam "{ $ip }" >/dev/null 2>&1; then d=denied
    elif nft get element inet rampart allow_$fam "{ $ip }" >/dev/null 2>&1; then d=allowed
    else d=denied; fi
    echo "$ip $d"
done
EOF
    # shellcheck disable=SC2086
    if unshare -n sh "$tmp/nft-decide.sh" "$tmp/out.nftables" $SAMPLE >"$tmp/nft.dec" 2>/dev/null; then
        bad=""
        while read -r ip d; do
            [ "$d" = "$(expected "$ip")" ] || bad="$bad $ip"
        done <"$tmp/nft.dec"
        check "nftables (the kernel's sets) decides as rampart check on $(wc -l <"$tmp/nft.dec") addresses${bad:+: not$bad}" [ -z "$bad" ]
    else
        skip "nftables decisions by the kernel" "cannot make a network namespace here"
    fi
else
    skip "nft -c accepts the nftables export" "no nft"
fi

# ---- iptables ----
if command -v iptables-restore >/dev/null 2>&1; then
    if iptables-restore --test --noflush "$tmp/out.iptables" 2>"$tmp/ipt.err"; then
        pass "iptables-restore --test accepts the iptables export"
        ip6tables-restore --test --noflush "$tmp/out.ip6tables" 2>>"$tmp/ipt.err"
        check "ip6tables-restore --test accepts the ip6tables export" [ $? -eq 0 ]
    elif grep -q -i -e "permission" -e "denied" -e "not permitted" "$tmp/ipt.err"; then
        skip "iptables-restore --test accepts the iptables export" "not permitted here"
    else
        check "iptables-restore --test accepts the iptables export" false
        sed 's/^/#   /' "$tmp/ipt.err"
    fi
else
    skip "iptables-restore --test accepts the iptables export" "no iptables"
fi

# ---- nginx ----
if command -v nginx >/dev/null 2>&1; then
    mkdir -p "$tmp/www" "$tmp/ngx"
    echo ok >"$tmp/www/index.html"
    ngx_conf() { # PORT
        [ "$(id -u)" -eq 0 ] && echo "user root;"
        cat <<EOF
pid $tmp/ngx/nginx.pid;
error_log $tmp/ngx/error.log;
daemon off;
events {}
http {
    access_log off;
    client_body_temp_path $tmp/ngx; proxy_temp_path $tmp/ngx; fastcgi_temp_path $tmp/ngx;
    uwsgi_temp_path $tmp/ngx; scgi_temp_path $tmp/ngx;
    server {
        listen 127.0.0.1:$1;
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Forwarded-For;
        location / { root $tmp/www; include $tmp/out.nginx; }
    }
}
EOF
    }
    port=$((20000 + $$ % 20000))
    ngx_conf $port >"$tmp/ngx/nginx.conf"
    check "nginx -t accepts the nginx export" \
        sh -c "nginx -t -q -c '$tmp/ngx/nginx.conf' 2>'$tmp/ngx/t.err'"
    ngx_pid=""
    for try in 1 2 3; do
        nginx -c "$tmp/ngx/nginx.conf" 2>/dev/null &
        ngx_pid=$!
        n=0
        while [ $n -lt 100 ] && kill -0 $ngx_pid 2>/dev/null &&
            ! curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; do
            n=$((n + 1))
            sleep 0.05 # polling for the listener
        done
        kill -0 $ngx_pid 2>/dev/null && break
        ngx_pid=""
        port=$((port + 1))
        ngx_conf $port >"$tmp/ngx/nginx.conf"
    done
    if [ -n "$ngx_pid" ]; then
        bad=""
        count=0
        for ip in $SAMPLE; do
            code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Forwarded-For: $ip" \
                "http://127.0.0.1:$port/")
            d=denied
            [ "$code" = 200 ] && d=allowed
            [ "$d" = "$(expected "$ip")" ] || bad="$bad $ip($code)"
            count=$((count + 1))
        done
        kill $ngx_pid
        wait $ngx_pid 2>/dev/null
        check "nginx (answering requests) decides as rampart check on $count addresses${bad:+: not$bad}" [ -z "$bad" ]
    else
        skip "nginx decisions" "nginx would not start on a loopback port"
    fi
else
    skip "nginx -t accepts the nginx export" "no nginx"
fi

# ---- --watch follows a sync ----
start_server main || exit 1
ADMIN="$tmp/admin.db"
HOST="$tmp/host.db"
printf '10.0.0.0/8\n' >"$tmp/w.txt"
"$RAMPART" --db "$ADMIN" apply --policy $P --action allow --name w --sync "$tmp/w.txt" >/dev/null 2>&1
"$RAMPART" --db "$HOST" sync >/dev/null 2>&1
W="$tmp/watch.conf"
"$RAMPART" --db "$HOST" export --policy $P --format nginx --output "$W" --watch --interval 1 \
    --exec "sh -c 'env >\"\$1.env\"; echo ran >>\"\$1\"' exec '$tmp/exec.log'" 2>"$tmp/watch.err" &
watch_pid=$!
file_has() { [ -f "$2" ] && grep -q -e "$1" "$2"; }
file_lacks() { ! grep -q -e "$1" "$2"; }
# wait_for SECONDS CMD...: poll until CMD succeeds.
wait_for() {
    limit=$(($1 * 20))
    shift
    n=0
    until "$@"; do
        n=$((n + 1))
        [ $n -ge $limit ] && return 1
        sleep 0.05 # polling for the watcher's file
    done
}
check "--watch: writes the file at the start" wait_for 5 file_has '^allow 10.0.0.0/8;' "$W"
check "--watch: runs --exec at the start" wait_for 5 [ -s "$tmp/exec.log" ]
check "--watch: --exec gets no API key in its environment" \
    sh -c '[ -s "$0" ] && ! grep -q "^RAMPART_API_KEY=\|^RAMPART_SERVE_API_KEY=" "$0"' \
    "$tmp/exec.log.env"
chmod 640 "$W"
printf '10.0.0.0/8\n10.9.0.0/16\n' >"$tmp/w.txt"
"$RAMPART" --db "$ADMIN" apply --policy $P --action allow --name w --sync "$tmp/w.txt" >/dev/null 2>&1
check "--watch: nothing changes before the host's sync" file_lacks 10.9.0.0 "$W"
"$RAMPART" --db "$HOST" sync >/dev/null 2>&1
check "--watch: rewritten after the sync" wait_for 5 file_has '^allow 10.9.0.0/16;' "$W"
# exec_runs N: --exec has run N times (counted at each poll: the file is written
# before --exec starts, so the count may lag it).
exec_runs() { [ "$(wc -l <"$tmp/exec.log")" -eq "$1" ]; }
check "--watch: --exec ran again" wait_for 5 exec_runs 2
check "--watch: the file kept its mode" [ "$(stat -c %a "$W")" = 640 ]
# A sync that changes nothing of the policy, then one that does: the watcher
# writes (and runs --exec) for the second only. Counted once it has stopped, so
# an --exec still running is not missed.
"$RAMPART" --db "$HOST" sync >/dev/null 2>&1
printf '10.0.0.0/8\n10.9.0.0/16\n10.8.0.0/16\n' >"$tmp/w.txt"
"$RAMPART" --db "$ADMIN" apply --policy $P --action allow --name w --sync "$tmp/w.txt" >/dev/null 2>&1
"$RAMPART" --db "$HOST" sync >/dev/null 2>&1
check "--watch: rewritten after the next change" wait_for 5 file_has '^allow 10.8.0.0/16;' "$W"
exec_ran() { [ "$(wc -l <"$tmp/exec.log")" -ge "$1" ]; }
wait_for 5 exec_ran 3
kill -TERM $watch_pid
wait $watch_pid
status=$?
check "--watch: SIGTERM ends it with exit 0" status_is 0
check "--watch: an unchanged policy is not written again (3 writes, 3 changes)" exec_runs 3
checks_done
