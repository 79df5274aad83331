/* http: the connections' guard (head deadline from accept, the pending cap that
 * cuts the oldest, 503 beyond the connection limit, unix sockets admitted at
 * accept), and the request checks every server gets (control characters in the
 * path, a header sent twice), over real loopback sockets and through dispatch. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rampart/http.h"

/* ---- a tiny server: GET /ok answers 200; the gate counts Host headers. One
 * event thread: connections are accepted in the order they were made. ---- */

typedef struct seen {
    size_t hosts;      /* Host headers of the last request the gate saw */
    bool admit;        /* the gate admits (a key) before refusing */
    bool refuse;       /* the gate refuses every request (401) */
} seen;

static void ok_handler(void *ctx, const http_request *req, http_response *resp)
{
    (void)ctx, (void)req;
    http_response_set(resp, 200, strdup("{\"ok\":true}"));
}

static bool gate(void *ctx, const http_request *req, http_response *resp)
{
    seen *s = ctx;
    s->hosts = http_request_header_count(req, "Host");
    if (s->admit)
        http_request_admit(req);
    if (!s->refuse)
        return true;
    http_response_set(resp, 401, strdup("{\"msg\":\"no\"}"));
    return false;
}

static const http_route routes[] = {{"GET", "/ok", ok_handler, NULL}};

static http_server *start(const char *listen, unsigned limit, unsigned pending,
                          unsigned head_s, seen *s)
{
    http_config cfg = {.listen = listen, .routes = routes, .nroutes = 1, .ctx = s,
                       .gate = gate, .connection_limit = limit, .pending_limit = pending,
                       .head_timeout_s = head_s, .timeout_s = 30, .threads = 1};
    http_server *srv = NULL;
    assert_int_equal(http_server_open(&cfg, &srv, NULL), ERROR_OK);
    assert_int_equal(http_server_start(srv, NULL), ERROR_OK);
    return srv;
}

static int connect_tcp(http_server *srv)
{
    const char *addr = http_server_address(srv); /* "127.0.0.1:PORT" */
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_port = htons((unsigned short)atoi(strchr(addr, ':') + 1));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void send_text(int fd, const char *text)
{
    assert_int_equal(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
}

/* A whole reply: its head and Content-Length bytes of body. */
static bool whole_reply(const char *text)
{
    const char *end = strstr(text, "\r\n\r\n");
    const char *cl = strstr(text, "Content-Length: ");
    return end && cl && cl < end &&
           strlen(end + 4) >= (size_t)strtoul(cl + strlen("Content-Length: "), NULL, 10);
}

/* What the server sends until it closes or a whole reply is in, or until `ms`
 * pass without a byte; *closed says whether it closed. */
static void read_reply(int fd, int ms, char *out, size_t size, bool *closed)
{
    size_t got = 0;
    *closed = false;
    out[0] = '\0';
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got + 1 < size && !whole_reply(out) && poll(&p, 1, ms) == 1) {
        ssize_t n = recv(fd, out + got, size - 1 - got, 0);
        if (n <= 0) {
            *closed = true;
            break;
        }
        got += (size_t)n;
        out[got] = '\0';
    }
    out[got] = '\0';
}

/* True when the server closed fd within `ms`, having sent nothing. */
static bool cut_within(int fd, int ms)
{
    char buf[256];
    bool closed;
    read_reply(fd, ms, buf, sizeof buf, &closed);
    return closed && buf[0] == '\0';
}

static const char whole[] = "GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n";

/* ---- the guard ---- */

/* A byte every 200 ms never lets the connection idle, yet it is cut at the head
 * deadline (1 s from accept); an admitted one next to it is not. */
static void deadline_from_accept(void **state)
{
    (void)state;
    seen s = {0};
    http_server *srv = start("tcp:127.0.0.1:0", 16, 8, 1, &s);
    int slow = connect_tcp(srv), kept = connect_tcp(srv);
    send_text(kept, whole);
    char buf[512];
    bool closed;
    read_reply(kept, 2000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    const char *head = "GET /ok HTTP/1.1\r\nHost: localhost\r\nX-Pad: aaaaaaaaaaaaaaaa";
    bool cut = false;
    for (size_t i = 0; head[i] && !cut; i++) {
        if (send(slow, head + i, 1, MSG_NOSIGNAL) != 1)
            break;
        cut = cut_within(slow, 200);
    }
    assert_true(cut || cut_within(slow, 3000));
    http_server_stats st;
    http_server_stats_get(srv, &st);
    assert_int_equal(st.cut_slow, 1);
    assert_int_equal(st.cut_room, 0);
    send_text(kept, whole); /* admitted: still served */
    read_reply(kept, 2000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    close(slow);
    close(kept);
    http_server_stop(srv);
}

/* Pending cap 2: a third silent connection cuts the oldest; a whole request still
 * gets through (and cuts the next oldest to get in). */
static void oldest_cut_for_room(void **state)
{
    (void)state;
    seen s = {0};
    http_server *srv = start("tcp:127.0.0.1:0", 16, 2, 30, &s);
    int a = connect_tcp(srv), b = connect_tcp(srv);
    char buf[512];
    bool closed;
    read_reply(a, 200, buf, sizeof buf, &closed); /* both accepted, in this order */
    assert_false(closed);
    int c = connect_tcp(srv);
    assert_true(cut_within(a, 3000));
    int d = connect_tcp(srv);
    send_text(d, whole);
    read_reply(d, 3000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    assert_true(cut_within(b, 3000));
    read_reply(c, 200, buf, sizeof buf, &closed);
    assert_false(closed);
    http_server_stats st;
    http_server_stats_get(srv, &st);
    assert_int_equal(st.cut_room, 2);
    assert_int_equal(st.cut_slow, 0);
    close(a), close(b), close(c), close(d);
    http_server_stop(srv);
}

/* A peer the gate refuses keeps no connection: the reply comes before the
 * request was read to its end, and the library closes it after the reply (so
 * refusals cannot keep a pending connection alive past its deadline either). */
static void refused_closed(void **state)
{
    (void)state;
    seen s = {.refuse = true};
    http_server *srv = start("tcp:127.0.0.1:0", 16, 2, 30, &s);
    int a = connect_tcp(srv);
    send_text(a, whole);
    char buf[512];
    bool closed;
    read_reply(a, 3000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 401"));
    assert_true(closed || cut_within(a, 3000));
    close(a);
    http_server_stop(srv);
}

/* Beyond the connection limit: a 503 with Retry-After, then the close; never a
 * wait in the kernel's queue. */
static void over_limit_503(void **state)
{
    (void)state;
    seen s = {0};
    http_server *srv = start("tcp:127.0.0.1:0", 2, 4, 30, &s);
    int a = connect_tcp(srv), b = connect_tcp(srv);
    char buf[1024];
    bool closed;
    send_text(a, whole);
    read_reply(a, 300, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    send_text(b, whole);
    read_reply(b, 300, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    int c = connect_tcp(srv);
    send_text(c, whole);
    read_reply(c, 3000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 503"));
    assert_non_null(strstr(buf, "Retry-After: 1"));
    assert_true(closed || cut_within(c, 3000));
    close(a);
    close(b);
    close(c);
    http_server_stats st;
    http_server_stats_get(srv, &st);
    assert_int_equal(st.over, 1);
    http_server_stop(srv);
}

/* A unix socket admits at accept: a silent peer outlives the head deadline. */
static void unix_admitted_at_accept(void **state)
{
    (void)state;
    char dir[] = "/tmp/rampart-http.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char spec[128];
    snprintf(spec, sizeof spec, "unix:%s/s.sock", dir);
    seen s = {0};
    http_server *srv = start(spec, 16, 1, 1, &s);
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%.100s", spec + 5);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof a), 0);
    }
    assert_false(cut_within(fds[0], 1500)); /* past the deadline, pending cap 1 */
    send_text(fds[0], whole);
    char buf[512];
    bool closed;
    read_reply(fds[0], 2000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    http_server_stats st;
    http_server_stats_get(srv, &st);
    assert_int_equal(st.cut_slow + st.cut_room + st.over, 0);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    http_server_stop(srv);
    rmdir(dir);
}

/* ---- request checks ---- */

static void path_control_characters(void **state)
{
    (void)state;
    seen s = {0};
    http_server *srv = start("tcp:127.0.0.1:0", 16, 8, 30, &s);
    static const struct {
        const char *target;
        const char *status;
    } cases[] = {
        {"/ok", "200"},         {"/ok%00", "400"},     {"/ok%00x", "400"},
        {"/o%0Ak", "400"},      {"/ok%1f", "400"},     {"/ok%7F", "400"},
        {"/ok%20", "404"},      {"/ok?x=%00", "200"},  {"/ok%zz", "404"},
        {"/ok%0", "404"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = connect_tcp(srv);
        char req[256], buf[1024], want[32];
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close"
                 "\r\n\r\n", cases[i].target);
        send_text(fd, req);
        bool closed;
        read_reply(fd, 3000, buf, sizeof buf, &closed);
        snprintf(want, sizeof want, "HTTP/1.1 %s", cases[i].status);
        if (!strstr(buf, want))
            fail_msg("%s: wanted %s, got %.40s", cases[i].target, cases[i].status, buf);
        close(fd);
    }
    /* Without a connection: a NUL is said by path_len. */
    http_inject in = {.method = "GET", .path = "/ok", .path_len = 5};
    http_response resp = {0};
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(resp.status, 400);
    http_response_set(&resp, 0, NULL);
    memset(&resp, 0, sizeof resp);
    in = (http_inject){.method = "GET", .path = "/o\x01k"};
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(resp.status, 400);
    http_response_set(&resp, 0, NULL);
    memset(&resp, 0, sizeof resp);
    in = (http_inject){.method = "GET", .path = "/ok"};
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(resp.status, 200);
    http_response_set(&resp, 0, NULL);
    http_server_stop(srv);
}

static void header_counts(void **state)
{
    (void)state;
    seen s = {0};
    http_server *srv = start("tcp:127.0.0.1:0", 16, 8, 30, &s);
    int fd = connect_tcp(srv);
    send_text(fd, "GET /ok HTTP/1.1\r\nHost: localhost\r\nhost: evil.example\r\n"
                  "Connection: close\r\n\r\n");
    char buf[512];
    bool closed;
    read_reply(fd, 3000, buf, sizeof buf, &closed);
    assert_int_equal(s.hosts, 2);
    close(fd);
    http_param h[] = {{"Host", "a"}, {"X", "1"}, {"HOST", "b"}};
    http_inject in = {.method = "GET", .path = "/ok", .headers = h, .nheaders = 3};
    http_response resp = {0};
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(s.hosts, 2);
    http_response_set(&resp, 0, NULL);
    in.nheaders = 2;
    memset(&resp, 0, sizeof resp);
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(s.hosts, 1);
    http_response_set(&resp, 0, NULL);
    http_server_stop(srv);
}

/* Several names in one pass: each counted, case-insensitively, others ignored. */
static size_t counted[3];

static bool count_gate(void *ctx, const http_request *req, http_response *resp)
{
    (void)ctx, (void)resp;
    static const char *const names[] = {"Host", "X-Forwarded-For", "Via"};
    http_request_header_counts(req, names, 3, counted);
    return true;
}

static void header_counts_many(void **state)
{
    (void)state;
    http_config cfg = {.listen = "tcp:127.0.0.1:0", .routes = routes, .nroutes = 1,
                       .gate = count_gate, .threads = 1};
    http_server *srv = NULL;
    assert_int_equal(http_server_open(&cfg, &srv, NULL), ERROR_OK);
    http_param h[] = {{"via", "a"}, {"Host", "x"}, {"X-Forwarded-Fo", "1"},
                      {"VIA", "b"}, {"X-Forwarded-For", "2"}};
    http_inject in = {.method = "GET", .path = "/ok", .headers = h, .nheaders = 5};
    http_response resp = {0};
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(counted[0], 1);
    assert_int_equal(counted[1], 1);
    assert_int_equal(counted[2], 2);
    http_response_set(&resp, 0, NULL);
    http_server_stop(srv);
}

/* ---- event threads: which one served, and the end of each batch ---- */

typedef struct batches {
    atomic_int served[2]; /* requests per event thread */
    atomic_int idle[2];   /* idle hook calls per event thread */
    atomic_int bad;       /* a request whose worker was out of range */
    atomic_int last;      /* the worker of the last request, -2: none yet */
    atomic_ullong conn;   /* its connection number */
} batches;

static void worker_handler(void *ctx, const http_request *req, http_response *resp)
{
    batches *b = ctx;
    if (req->worker >= 0 && req->worker < 2)
        atomic_fetch_add(&b->served[req->worker], 1);
    else
        atomic_fetch_add(&b->bad, 1);
    atomic_store(&b->last, req->worker);
    atomic_store(&b->conn, req->connection);
    http_response_set(resp, 200, strdup("{}"));
}

static void worker_idle(void *ctx, int worker)
{
    batches *b = ctx;
    if (worker >= 0 && worker < 2)
        atomic_fetch_add(&b->idle[worker], 1);
    else
        atomic_fetch_add(&b->bad, 1);
}

static const http_route worker_routes[] = {{"GET", "/ok", worker_handler, NULL}};

static http_server *start_batches(batches *b, unsigned threads)
{
    http_config cfg = {.listen = "tcp:127.0.0.1:0", .routes = worker_routes, .nroutes = 1,
                       .ctx = b, .timeout_s = 30, .threads = threads, .idle = worker_idle};
    http_server *srv = NULL;
    assert_int_equal(http_server_open(&cfg, &srv, NULL), ERROR_OK);
    assert_int_equal(http_server_start(srv, NULL), ERROR_OK);
    return srv;
}

/* Each request names the event thread that served it and its connection; that
 * thread then says its batch is over. Off event threads: -1, and no idle hook. */
static void event_threads_batches(void **state)
{
    (void)state;
    batches b = {0};
    atomic_store(&b.last, -2);
    http_server *srv = start_batches(&b, 2);
    int fds[4];
    unsigned long long conns[4];
    for (int i = 0; i < 4; i++)
        fds[i] = connect_tcp(srv);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++) {
            send_text(fds[i], whole);
            char buf[512];
            bool closed;
            read_reply(fds[i], 3000, buf, sizeof buf, &closed);
            assert_non_null(strstr(buf, "HTTP/1.1 200"));
            int w = atomic_load(&b.last);
            assert_true(w == 0 || w == 1);
            /* The idle hook of that thread follows its batch (poll: it runs
             * after the reply left). */
            for (int t = 0; t < 300 && atomic_load(&b.idle[w]) == 0; t++)
                poll(NULL, 0, 10);
            assert_true(atomic_load(&b.idle[w]) > 0);
            if (round == 0)
                conns[i] = atomic_load(&b.conn);
            assert_true(atomic_load(&b.conn) == conns[i]); /* kept alive: same number */
        }
    }
    for (int i = 1; i < 4; i++)
        assert_true(conns[i] != conns[0] && conns[i] != 0);
    assert_int_equal(atomic_load(&b.served[0]) + atomic_load(&b.served[1]), 12);
    assert_int_equal(atomic_load(&b.bad), 0);
    http_inject in = {.method = "GET", .path = "/ok"};
    http_response resp = {0};
    http_server_dispatch(srv, &in, &resp);
    assert_int_equal(resp.status, 200);
    assert_int_equal(atomic_load(&b.bad), 1); /* worker -1 */
    assert_true(atomic_load(&b.conn) == 0);
    http_response_set(&resp, 0, NULL);
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    http_server_stop(srv);

    /* A thread per connection: worker -1, never an idle call. */
    batches p = {0};
    srv = start_batches(&p, 0);
    int fd = connect_tcp(srv);
    send_text(fd, whole);
    char buf[512];
    bool closed;
    read_reply(fd, 3000, buf, sizeof buf, &closed);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    assert_int_equal(atomic_load(&p.last), -1);
    assert_int_equal(atomic_load(&p.idle[0]) + atomic_load(&p.idle[1]), 0);
    close(fd);
    http_server_stop(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deadline_from_accept),
        cmocka_unit_test(oldest_cut_for_room),
        cmocka_unit_test(refused_closed),
        cmocka_unit_test(over_limit_503),
        cmocka_unit_test(unix_admitted_at_accept),
        cmocka_unit_test(path_control_characters),
        cmocka_unit_test(header_counts),
        cmocka_unit_test(header_counts_many),
        cmocka_unit_test(event_threads_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
