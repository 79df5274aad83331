# Helpers of the agent endpoint's end-to-end tests (agent.sh, agent_mirror.sh):
# start/stop real `rampart agent` processes and talk to them with curl over the
# unix socket or loopback TCP. Only defines functions: sourced after lib.sh.

agents=""

# start_agent NAME ARGS...: `rampart agent ARGS` with a ready file; waits for it
# (polling, 10 s at most). Sets $agent_pid, $sock (the first unix listener) and
# $tcp (the first "127.0.0.1:PORT"); both empty when it did not start (its stderr
# is in $tmp/NAME.log).
start_agent() {
    name=$1
    shift
    rm -f "$tmp/$name.ready"
    "$RAMPART" agent --ready-file "$tmp/$name.ready" "$@" 2>"$tmp/$name.log" &
    agent_pid=$!
    agents="$agents $agent_pid"
    eval "pid_$name=$agent_pid"
    i=0
    while [ ! -s "$tmp/$name.ready" ] && [ $i -lt 200 ]; do
        kill -0 "$agent_pid" 2>/dev/null || break # it refused to start
        sleep 0.05
        i=$((i + 1))
    done
    sock=$(sed -n 's/^unix://p' "$tmp/$name.ready" 2>/dev/null | head -n 1)
    tcp=$(sed -n 's/^tcp://p' "$tmp/$name.ready" 2>/dev/null | head -n 1)
}

# start_listening_agent NAME ARGS...: start_agent, which must come up with both a
# unix socket and a TCP listener: $S and $T. Otherwise the test file ends here, with
# its log.
start_listening_agent() {
    start_agent "$@"
    if [ -z "$sock" ] || [ -z "$tcp" ]; then
        fail "rampart agent did not start"
        sed 's/^/#   /' "$tmp/$1.log"
        exit 1
    fi
    S=$sock
    T=$tcp
}

# stop_agent NAME: SIGTERM and wait; $status is its exit status.
stop_agent() {
    eval "p=\$pid_$1"
    kill -TERM "$p" 2>/dev/null
    wait "$p"
    status=$?
}

stop_agents() {
    for p in $agents; do kill -TERM "$p" 2>/dev/null; done
    for p in $agents; do wait "$p" 2>/dev/null; done
}

# ureq SOCKET PATH [curl args...]: GET (or -X …) over the unix socket. Body in
# $tmp/out, headers in $tmp/hdr, HTTP status in $status (000: no reply).
ureq() {
    s=$1
    p=$2
    shift 2
    status=$(curl -sS --max-time 10 -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' \
        --unix-socket "$s" "$@" "http://localhost$p" 2>"$tmp/err")
}

# treq ADDR PATH [curl args...]: the same over TCP with the key from $KEYCONF or
# $tmp/key.curl (a curl config file: the key never reaches argv).
treq() {
    a=$1
    p=$2
    shift 2
    status=$(curl -sS --max-time 10 -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' \
        -K "${KEYCONF:-$tmp/key.curl}" "$@" "http://$a$p" 2>"$tmp/err")
}

# key_config KEYFILE: write $tmp/key.curl sending that key.
key_config() {
    printf 'header = "Authorization: Bearer %s"\n' "$(head -n 1 "$1")" >"$tmp/key.curl"
}

is() { [ "$status" = "$1" ]; }
hdr_has() { tr -d '\r' <"$tmp/hdr" | grep -qi -e "$1"; }
# The first "NAME":"value" of the body.
field() { grep -o "\"$1\":\"[^\"]*\"" "$tmp/out" | head -n 1 | sed 's/^"[^"]*":"//; s/"$//'; }
# status and an error body in the API's shape (error_code, status_code, msg,
# operation id also in the header).
error_is() {
    [ "$status" = "$2" ] || return 1
    op=$(field operation_id)
    out_has "^{\"error_code\":\"$1\",\"status_code\":$2,\"msg\":\"[^\"]" &&
        out_has "\"details\":{\"operation_id\":\"op_[0-9A-Za-z]\{27\}\"}" &&
        hdr_has "^Operation-Id: $op$"
}

# no_sanitizer_reports: none of the agents' logs holds an ASan/UBSan/LSan report
# (under SAN=1 builds; a report also makes the agent exit non-zero).
no_sanitizer_reports() {
    ! grep -l -e 'Sanitizer' -e 'runtime error:' "$tmp"/*.log >/dev/null 2>&1
}

# raw_req tcp:ADDR|unix:PATH [KEYFILE]: the request head on stdin (one header a
# line, LF endings; KEY stands for the first line of KEYFILE, which stays off
# argv), sent byte for byte as typed (curl would merge a second Host, for one) with
# CRLF endings and a blank line. Body in $tmp/out, status in $status (000: none).
raw_req() {
    perl -MIO::Socket::INET -MIO::Socket::UNIX -e '
        $SIG{ALRM} = sub { exit 1 }; alarm 10;
        my ($to, $keyfile) = @ARGV;
        my $key = "";
        if ($keyfile) { open my $k, "<", $keyfile or die; $key = <$k>; chomp $key; }
        my $head = join "", map { chomp; s/KEY/$key/g; "$_\r\n" } <STDIN>;
        my $s = $to =~ /^unix:(.*)/ ? IO::Socket::UNIX->new(Peer => $1)
                                    : IO::Socket::INET->new(PeerAddr => substr($to, 4));
        $s or die "connect: $!";
        print $s $head, "Connection: close\r\n\r\n";
        local $/; my $reply = <$s>; $reply = "" unless defined $reply;
        my ($code) = $reply =~ m{^HTTP/1\.[01] (\d{3})};
        my (undef, $body) = split /\r\n\r\n/, $reply, 2;
        print defined $code ? $code : "000", "\n", defined $body ? $body : "";
    ' "$@" >"$tmp/raw.out" 2>"$tmp/err"
    status=$(head -n 1 "$tmp/raw.out")
    tail -n +2 "$tmp/raw.out" >"$tmp/out"
}
