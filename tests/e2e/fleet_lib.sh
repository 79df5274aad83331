# Helpers of the fleet test (fleet.sh) and bench (tests/bench/fleet.sh): a hub's
# mirror-only agent and nginx in front of it, from assets/nginx-fleet.conf with a
# run's own paths, ports and keys. Only defines functions; needs $RAMPART and
# $FLEET_DIR (a private directory of the run).

fleet_asset="$(cd "$(dirname "$0")/../.." && pwd)/assets/nginx-fleet.conf"

# fleet_nginx: the nginx binary into $NGINX (it lives in /usr/sbin, which a user's
# PATH may leave out); false when there is none.
fleet_nginx() {
    NGINX=$(command -v nginx 2>/dev/null)
    [ -z "$NGINX" ] && [ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx
    [ -n "$NGINX" ]
}

# fleet_tls: a self-signed certificate for 127.0.0.1 ($FLEET_DIR/ngx/tls.pem and
# tls.key); false without openssl.
fleet_tls() {
    command -v openssl >/dev/null 2>&1 &&
        openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
            -addext subjectAltName=IP:127.0.0.1 -keyout "$FLEET_DIR/ngx/tls.key" \
            -out "$FLEET_DIR/ngx/tls.pem" >/dev/null 2>&1
}

# fleet_conf PORT TLS_PORT HUB_ADDR: the shipped file with this run's paths and
# ports: its TLS server block as it is (on TLS_PORT; "" when there is no
# certificate), and a plain loopback listener on PORT for the followers, whose
# client trusts only real certificates.
fleet_conf() {
    d=$FLEET_DIR/ngx
    tls_listen="listen 127.0.0.1:$2 ssl;"
    [ -n "$2" ] || tls_listen=""
    no_tls='/^ *ssl_/d'
    [ -n "$2" ] && no_tls=''
    sed -e "s|/var/cache/nginx/rampart-fleet|$d/cache|" \
        -e "s|/etc/nginx/rampart-fleet/|$d/keys/|" \
        -e "s|/var/log/nginx/rampart-fleet.log|$d/access.log|" \
        -e "s|/etc/ssl/certs/fleet.example.org.pem|$d/tls.pem|" \
        -e "s|/etc/ssl/private/fleet.example.org.key|$d/tls.key|" \
        -e "s|server 127.0.0.1:8181;|server $3;|" \
        -e "s|listen 443 ssl;|$tls_listen listen 127.0.0.1:$1;|" \
        -e "$no_tls" "$fleet_asset"
}

# fleet_main_conf WORKERS: the main file around it, for a user without root.
fleet_main_conf() {
    d=$FLEET_DIR/ngx
    [ "$(id -u)" -eq 0 ] && echo "user root;"
    cat <<EOF
worker_processes $1;
pid $d/nginx.pid;
error_log $d/error.log;
daemon off;
events { worker_connections 4096; }
http {
    client_body_temp_path $d; proxy_temp_path $d; fastcgi_temp_path $d;
    uwsgi_temp_path $d; scgi_temp_path $d;
    include $d/fleet.conf;
}
EOF
}

# fleet_start HUB_DB MAX_AGE WORKERS TLS(1 or ""): the hub's agent (mirror-only,
# its uris at nginx's address) and nginx, on a port that is free (a few tries).
# Sets NPORT, TPORT, HUB_ADDR, hub_pid, ngx_pid; `nginx -t`'s status in
# $fleet_conf_status (the first try's). False when they would not start (logs in
# $FLEET_DIR/hub.log, $FLEET_DIR/ngx/*.log). The keys: $FLEET_DIR/ngx/keys/keys.map
# must exist; hub-key.conf is written here.
fleet_start() {
    d=$FLEET_DIR/ngx
    mkdir -p "$d/keys"
    fleet_conf_status=""
    for try in 1 2 3 4 5; do
        NPORT=$((20000 + ($$ * 7 + try * 997) % 40000))
        TPORT=""
        [ -n "$4" ] && TPORT=$((NPORT + 1))
        rm -f "$FLEET_DIR/hub.ready"
        "$RAMPART" --db "$1" agent --mirror-only --listen tcp:127.0.0.1:0 \
            --key-file "$FLEET_DIR/hub.key" --public-url "http://127.0.0.1:$NPORT" \
            --max-age "$2" --ready-file "$FLEET_DIR/hub.ready" 2>"$FLEET_DIR/hub.log" &
        hub_pid=$!
        n=0
        while [ ! -s "$FLEET_DIR/hub.ready" ] && [ $n -lt 200 ] && kill -0 $hub_pid 2>/dev/null; do
            n=$((n + 1))
            sleep 0.05 # polling for the ready file
        done
        [ -s "$FLEET_DIR/hub.ready" ] || return 1
        HUB_ADDR=$(sed -n 's/^tcp://p' "$FLEET_DIR/hub.ready")
        printf 'proxy_set_header Authorization "Bearer %s";\n' \
            "$(head -n 1 "$FLEET_DIR/hub.key")" >"$d/keys/hub-key.conf"
        fleet_conf "$NPORT" "$TPORT" "$HUB_ADDR" >"$d/fleet.conf"
        fleet_main_conf "$3" >"$d/nginx.conf"
        if [ -z "$fleet_conf_status" ]; then
            "$NGINX" -t -q -c "$d/nginx.conf" -e "$d/error.log" >"$d/t.log" 2>&1
            fleet_conf_status=$?
        fi
        "$NGINX" -c "$d/nginx.conf" -e "$d/error.log" 2>>"$d/start.log" &
        ngx_pid=$!
        n=0
        while [ $n -lt 100 ] && kill -0 $ngx_pid 2>/dev/null &&
            ! curl -s -o /dev/null "http://127.0.0.1:$NPORT/"; do
            n=$((n + 1))
            sleep 0.05 # polling for the listener
        done
        kill -0 "$ngx_pid" 2>/dev/null && return 0
        ngx_pid=""
        kill "$hub_pid" 2>/dev/null
        wait "$hub_pid" 2>/dev/null
        hub_pid=""
    done
    return 1
}

# fleet_stop_nginx, fleet_stop_hub: SIGTERM and wait. The hub's last log line says
# how many requests it answered ("stopped (SIGTERM): N requests, ...").
fleet_stop_nginx() {
    [ -n "${ngx_pid:-}" ] && kill "$ngx_pid" 2>/dev/null && wait "$ngx_pid" 2>/dev/null
    ngx_pid=""
}
fleet_stop_hub() {
    [ -n "${hub_pid:-}" ] && kill "$hub_pid" 2>/dev/null && wait "$hub_pid" 2>/dev/null
    hub_pid=""
}

# fleet_hub_requests: what the stopped hub said it answered.
fleet_hub_requests() {
    sed -n 's/^stopped ([A-Z]*): \([0-9]*\) requests.*/\1/p' "$FLEET_DIR/hub.log"
}

# fleet_key: a random key (hex).
fleet_key() {
    od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}
