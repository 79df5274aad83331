#!/bin/sh
# make bench: token lookups from `rampart agent` with keep-alive, against nginx
# serving a static file of the same bytes on the same box, in the same run:
# over loopback TCP (wrk -t2 -c64) and over a unix socket (tests/tools/kaload.c
# -t2 -c64, the same client for both servers: wrk speaks TCP only). Agent and
# nginx runs alternate (BENCH_AGENT_ROUNDS rounds of BENCH_AGENT_SECONDS each);
# the rows give the medians. Then the same lookups while another process holds
# 500 slow-header connections (tests/tools/slowload.c, issue 14): p99 of lookups
# each on a new connection, with and without that load, and of wrk's kept-alive
# ones under it. Figures, not pass/fail. nginx and wrk are installed from
# Debian's packages when missing (else those rows are skipped, said so).
# usage: tests/bench/agent.sh BUILD_DIR   (rampart inside; tools/slowload and
# tools/kaload too, else they are compiled here)
set -u
. "$(dirname "$0")/table.sh"
build=$(cd "$1" && pwd)
secs=${BENCH_AGENT_SECONDS:-3}
rounds=${BENCH_AGENT_ROUNDS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-bench-agent.XXXXXX")
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# tool NAME: the path of tests/tools/NAME, built next to rampart or compiled
# here; "" when it cannot be.
tool() {
    if [ -x "$build/tools/$1" ]; then
        echo "$build/tools/$1"
    elif ${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -pthread -o "$work/$1" \
        "$(dirname "$0")/../tools/$1.c" 2>"$work/cc-$1.log"; then
        echo "$work/$1"
    fi
}

# The slow-header figures need neither wrk nor nginx: run at the end, or instead
# of the rest when those are missing. Needs $agent_addr, $id, $work/agent.key.
slow_bench() {
    slowload=$(tool slowload)
    if [ -z "$slowload" ]; then
        echo "agent bench: slow-header figures skipped (no C compiler for tests/tools/slowload.c)"
        return 0
    fi
    n=${BENCH_AGENT_PROBES:-2000}
    url_path="/v1/credentials/$id/token"
    "$slowload" probe "$agent_addr" "$url_path" "$work/agent.key" "$n" >"$work/quiet.txt" \
        2>"$work/quiet.err"
    "$slowload" hold "$agent_addr" 500 100 >"$work/load.out" 2>&1 &
    load_pid=$!
    pids="$pids $load_pid"
    i=0
    while [ "$(tail -n 1 "$work/load.out" 2>/dev/null | sed -n 's/.*opened=\([0-9]*\).*/\1/p')" \
        -lt 500 ] 2>/dev/null || [ ! -s "$work/load.out" ]; do
        [ $i -ge 200 ] && break
        sleep 0.05
        i=$((i + 1))
    done
    "$slowload" probe "$agent_addr" "$url_path" "$work/agent.key" "$n" >"$work/loaded.txt" \
        2>"$work/loaded.err"
    if command -v wrk >/dev/null 2>&1; then
        wrk_run "http://$agent_addr$url_path" "$work/agent-loaded.txt"
    fi
    kill "$load_pid" 2>/dev/null
    wait "$load_pid" 2>/dev/null
    pfig() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$2"; }
    q99=$(pfig p99_ms "$work/quiet.txt")
    l99=$(pfig p99_ms "$work/loaded.txt")
    bench_row "agent lookups, new connection each, p99 ms" "$q99" "" "" \
        "$n sequential, no other load ($(pfig failed "$work/quiet.txt") failed)"
    bench_row "  same, 500 slow-header conns held, p99 ms" "$l99" "$q99" \
        "$(bench_ratio "$l99" "$q99")" \
        "< 50 ms (baseline: no load; $(pfig failed "$work/loaded.txt") failed; load: $(tail -n 1 "$work/load.out"))"
    if [ -s "$work/agent-loaded.txt" ]; then
        k99=$(get p99 "$work/agent-loaded.txt")
        kq=${a_tcp_p99:-}
        bench_row "  wrk keep-alive under that load, p99 ms" "$k99" "$kq" \
            "$(bench_ratio "$k99" "$kq")" "< 50 ms (baseline: the wrk runs above, no load)"
    fi
}

# wrk_run URL OUT: wrk with the key header; requests/s, p99 in ms and the
# replies that were not 2xx into OUT.
wrk_run() {
    wrk -t2 -c64 -d"${secs}s" --latency -s "$work/key.lua" "$1" >"$2.raw" 2>&1
    awk '
        function ms(v) {
            if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0;
            if (v ~ /s$/) return v * 1000; return v }
        /requests in/ { n = $1 }
        /Requests\/sec:/ { rps = $2 }
        $1 == "99%" { p99 = ms($2) }
        /Non-2xx/ { bad = $NF }
        END { printf "rps %.0f\np99 %.2f\nbad %d\nrequests %d\n", rps, p99, bad, n }' \
        "$2.raw" >"$2"
}

# kaload_run ADDR PATH OUT: the same figures from kaload (unix:PATH or tcp:…).
kaload_run() {
    "$kaload" "$1" "$2" -t 2 -c 64 -d "$secs" -k "$work/agent.key" >"$3.raw" 2>&1
    awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
        END { printf "rps %.0f\np99 %.2f\nbad %d\nrequests %d\n", f["rps"], f["p99_ms"],
              f["non2xx"] + f["errors"], f["requests"] }' "$3.raw" >"$3"
}

# cpu_run PIDS CMD ARGS... OUT: CMD (wrk_run or kaload_run, its figures into OUT,
# its last argument), then what the server processes PIDS spent on CPU (user and
# system) per request, in microseconds: a figure other jobs on the machine barely
# move, unlike requests per second.
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
ticks() {
    for p in $1; do awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null; done |
        awk '{ s += $1 } END { print s + 0 }'
}
cpu_run() {
    servers=$1
    shift
    t0=$(ticks "$servers")
    "$@"
    t1=$(ticks "$servers")
    for out in "$@"; do :; done
    awk -v t=$((t1 - t0)) -v hz="$hz" '$1 == "requests" && $2 > 0 {
        printf "cpu_us %.2f\n", t * 1e6 / hz / $2 }' "$out" >>"$out"
}

get() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

# median KEY FILE...: the median of KEY over the runs' figure files.
median() {
    k=$1
    shift
    for f in "$@"; do get "$k" "$f"; done | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# wrk and nginx from Debian's packages when missing (sudo when not root).
need=""
command -v wrk >/dev/null 2>&1 || need="$need wrk"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need="$need nginx-light"
if [ -n "$need" ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo -n"
    echo "agent bench: installing$need"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends $need; } >"$work/apt.log" 2>&1
fi
NGINX=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
have_wrk=1
command -v wrk >/dev/null 2>&1 && [ -x "$NGINX" ] || have_wrk=""

# poll FILE: wait (10 s at most) until FILE is non-empty.
poll() {
    i=0
    while [ ! -s "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    [ -s "$1" ]
}

# ---- a cache holding one credential with its token, made by a real sync ----
key=bench_agent_$$
export RAMPART_SERVE_API_KEY=$key RAMPART_API_KEY=$key RAMPART_RATE=0
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" RAMPART_DB="$work/cache.db"
"$build/rampart" serve-api --listen tcp:127.0.0.1:0 --db "$work/server.db" \
    --ready-file "$work/server.ready" 2>/dev/null &
pids="$pids $!"
poll "$work/server.ready" || { echo "agent bench: serve-api did not start"; exit 0; }
export RAMPART_API_URL="http://$(cat "$work/server.ready")"
"$build/rampart" creds create --description bench --sync >"$work/created" 2>&1
id=$(sed -n 's/^credential \([^ ]*\) .*/\1/p' "$work/created")

mkdir -m 700 "$work/run"
"$build/rampart" agent --listen tcp:127.0.0.1:0 --listen "unix:$work/run/agent.sock" \
    --key-file "$work/agent.key" --rate 0 --ready-file "$work/agent.ready" \
    2>"$work/agent.log" &
agent_pid=$!
pids="$pids $agent_pid"
poll "$work/agent.ready" || { echo "agent bench: rampart agent did not start"; exit 0; }
agent_addr=$(sed -n 's/^tcp://p' "$work/agent.ready")
# The key reaches wrk through a script, not its argv.
cat >"$work/key.lua" <<EOF
local f = io.open("$work/agent.key")
wrk.headers["Authorization"] = "Bearer " .. f:read("*l")
f:close()
EOF
printf 'header = "Authorization: Bearer %s"\n' "$(head -n 1 "$work/agent.key")" >"$work/key.curl"
curl -sS -o "$work/reply.json" -K "$work/key.curl" "http://$agent_addr/v1/credentials/$id/token"

kaload=$(tool kaload)
if [ -z "$have_wrk" ]; then
    echo "agent bench: the nginx comparison skipped (wrk or nginx missing and could not" \
        "be installed: apt-get install wrk nginx-light)"
    slow_bench
    bench_done
    exit 0
fi

# ---- nginx: the same bytes as a static file, keep-alive, no access log ----
mkdir -p "$work/www" "$work/nginx"
cp "$work/reply.json" "$work/www/token.json"
port=0
for try in 1 2 3 4 5 6 7 8; do
    port=$((20000 + ($$ * 7 + try * 997) % 40000))
    rm -f "$work/run/nginx.sock"
    # As root nginx would run its workers as nobody, who cannot read $work.
    user=""
    [ "$(id -u)" = 0 ] && user="user root;"
    cat >"$work/nginx.conf" <<EOF
$user
daemon off;
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx;
    proxy_temp_path $work/nginx;
    fastcgi_temp_path $work/nginx;
    uwsgi_temp_path $work/nginx;
    scgi_temp_path $work/nginx;
    keepalive_requests 1000000;
    default_type application/json;
    server {
        listen 127.0.0.1:$port;
        listen unix:$work/run/nginx.sock;
        root $work/www;
    }
}
EOF
    "$NGINX" -c "$work/nginx.conf" -p "$work/nginx" 2>>"$work/nginx/start.log" &
    nginx_pid=$!
    i=0
    while [ $i -lt 100 ] && kill -0 "$nginx_pid" 2>/dev/null &&
        ! curl -s -o /dev/null "http://127.0.0.1:$port/token.json"; do
        sleep 0.05
        i=$((i + 1))
    done
    if kill -0 "$nginx_pid" 2>/dev/null; then
        pids="$pids $nginx_pid"
        break
    fi
    port=0
done
if [ "$port" = 0 ]; then
    echo "agent bench: nginx did not start (see its error log); the comparison skipped"
    slow_bench
    bench_done
    exit 0
fi

# ---- the runs: agent and nginx alternate, medians ----
url_path="/v1/credentials/$id/token"
workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
r=1
while [ $r -le "$rounds" ]; do
    cpu_run "$agent_pid" wrk_run "http://$agent_addr$url_path" "$work/tcp-agent.$r"
    cpu_run "$workers" wrk_run "http://127.0.0.1:$port/token.json" "$work/tcp-nginx.$r"
    if [ -n "$kaload" ]; then
        cpu_run "$agent_pid" kaload_run "unix:$work/run/agent.sock" "$url_path" \
            "$work/unix-agent.$r"
        cpu_run "$workers" kaload_run "unix:$work/run/nginx.sock" /token.json \
            "$work/unix-nginx.$r"
    fi
    r=$((r + 1))
done

# rows TRANSPORT LABEL: the req/s and p99 rows of one transport.
rows() {
    a_rps=$(median rps "$work/$1-agent".*)
    n_rps=$(median rps "$work/$1-nginx".*)
    a_p99=$(median p99 "$work/$1-agent".*)
    n_p99=$(median p99 "$work/$1-nginx".*)
    bench_row "agent token lookups, keep-alive $2, req/s" "$a_rps" "$n_rps" \
        "$(bench_ratio "$a_rps" "$n_rps")" \
        ">= 1.0x, p99 <= nginx's (baseline: nginx, a static file of the same bytes; medians of $rounds alternating ${secs}s runs)"
    bench_row "  same, p99 ms" "$a_p99" "$n_p99" "$(bench_ratio "$a_p99" "$n_p99")" \
        "<= nginx's (ratio <= 1.0)"
    a_cpu=$(median cpu_us "$work/$1-agent".*)
    n_cpu=$(median cpu_us "$work/$1-nginx".*)
    bench_row "  same, server CPU us per request" "$a_cpu" "$n_cpu" \
        "$(bench_ratio "$a_cpu" "$n_cpu")" "(nginx: its workers; other jobs barely move it)"
    echo "agent bench: $1 req/s per round, agent: $(for f in "$work/$1-agent".*; do get rps "$f"; done | tr '\n' ' ')nginx: $(for f in "$work/$1-nginx".*; do get rps "$f"; done | tr '\n' ' ')"
    bad=$(for f in "$work/$1-agent".*; do get bad "$f"; done | awk '{ s += $1 } END { print s + 0 }')
    [ "$bad" -gt 0 ] && echo "agent bench: $bad agent replies over $1 were not 2xx or failed"
    [ "$1" = tcp ] && a_tcp_p99=$a_p99
    return 0
}
rows tcp "TCP (wrk -t2 -c64)"
if [ -n "$kaload" ]; then
    rows unix "unix socket (kaload -t2 -c64)"
else
    echo "agent bench: the unix-socket rows skipped (no C compiler for tests/tools/kaload.c)"
fi

# ---- policy checks while tokens are looked up (100,000 rules) ----
# /check on one connection set and token lookups on another, at once, for
# BENCH_MIXED_SECONDS (12 s: the agent writes its token-fetch times every 10 s,
# which once rebuilt the whole index on a request thread); nginx serves the same
# two replies as static files under the same two loads. p99.9 of the checks; the
# agent's log counts its index builds, which must not move: no rule changes.
mixed_bench() {
    mixed=${BENCH_MIXED_SECONDS:-12}
    mn=${BENCH_MIXED_RULES:-100000}
    MP=ipp_mixedbench00000000000001
    awk -v n="$mn" -v p="$MP" 'BEGIN {
        printf "[";
        for (i = 0; i < n; i++)
            printf "%s{\"id\":\"ipr_%027d\",\"cidr\":\"10.%d.%d.%d/32\",\"ip_policy\":{\"id\":\"%s\"},\"action\":\"%s\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
                (i ? ",\n" : ""), i, int(i / 65536) % 256, int(i / 256) % 256, i % 256, p,
                (i % 2 ? "allow" : "deny");
        print "]" }' >"$work/mixed.json"
    "$build/rampart" rules import "$work/mixed.json" >/dev/null
    check_path="/v1/ip_policies/$MP/check?ip=10.0.3.7"
    curl -sS -o "$work/check.json" -K "$work/key.curl" "http://$agent_addr$check_path"
    cp "$work/check.json" "$work/www/check.json"
    # printf '%s\n': the lua's "\n" must reach it as two characters.
    printf '%s\n' "local f = io.open(\"$work/agent.key\")" \
        'wrk.headers["Authorization"] = "Bearer " .. f:read("*l")' 'f:close()' \
        'done = function(summary, latency, requests)' \
        '    io.write(string.format("p999 %.3f\n", latency:percentile(99.9) / 1000))' \
        '    io.write(string.format("p99 %.3f\n", latency:percentile(99) / 1000))' \
        '    io.write(string.format("requests %d\n", summary.requests))' \
        '    io.write(string.format("bad %d\n", summary.errors.status))' 'end' \
        >"$work/p999.lua"
    builds() { grep -c "policy index built" "$work/agent.log"; }
    before=$(builds)
    # mixed_run CHECK_URL TOKEN_URL OUT: both loads at once; the checks' figures.
    mixed_run() {
        wrk -t1 -c16 -d"${mixed}s" -s "$work/key.lua" "$2" >/dev/null 2>&1 &
        load=$!
        wrk -t1 -c16 -d"${mixed}s" -s "$work/p999.lua" "$1" >"$3.raw" 2>&1
        grep -E '^(p999|p99|requests|bad) ' "$3.raw" >"$3"
        wait "$load"
    }
    mixed_run "http://$agent_addr$check_path" "http://$agent_addr$url_path" "$work/mixed-agent"
    after=$(builds)
    mixed_run "http://127.0.0.1:$port/check.json" "http://127.0.0.1:$port/token.json" \
        "$work/mixed-nginx"
    a=$(get p999 "$work/mixed-agent")
    b=$(get p999 "$work/mixed-nginx")
    bench_row "agent /check p99.9 ms, with token lookups ($mn rules)" "$a" "$b" \
        "$(bench_ratio "$a" "$b")" \
        "<= nginx's p99.9 (baseline: nginx, the same reply as a static file, the same two loads; ${mixed}s, $(get requests "$work/mixed-agent") checks, $(get bad "$work/mixed-agent") not 2xx)"
    bench_row "  agent index builds during that run" "$((after - before))" "" "" \
        "0: no rule changed (the agent's own fetch records never rebuild)"
}
mixed_bench
[ -s "$work/mixed-agent" ] || { echo "agent bench: the mixed run gave no figures:"; cat "$work/mixed-agent.raw"; }

# ---- under 500 slow-header connections from another process ----
slow_bench
bench_done
exit 0
