/* The API client over a real loopback socket, against a scripted peer that answers
 * each request as the test says (a reply, a close, a reset, silence, a huge body).
 * This checks what only the wire shows: the headers sent, keep-alive for GET,
 * DELETE and PATCH, a fresh connection for every create, exactly one POST on a dead
 * connection, and how each failure is classified. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rampart/api.h"
#include "rampart/codec.h"
#include "rampart/kind.h"
#include "test_support.h"

#define KEY "sk_test_2Cs8SecretSecretSecret"
#define RULE_ID "ipr_2Cs8WqYF3xV8eO7cLbM1sQ9pZkT"
#define POLICY_ID "ipp_2Cs8Vd0ZqL4eTf1gKx9RmB3nHwA"
#define CRED_ID "cr_2Cs8Xa7bC1dE2fG3hI4jK5lM6nO"
#define OP_ID "op_2Cs8Yb1cD2eF3gH4iJ5kL6mN7oP"
#define TOKEN "2Cs8Xa7bC1dE2fG3hI4jK5lM6nO_4kQ8vN2xR7tY1wZ9pL3mB6c"

#define MAX_REQ 16
#define MAX_CONN 16
#define REQ_MAX 8192

typedef enum step_kind {
    STEP_REPLY,   /* send `reply` and keep the connection */
    STEP_CLOSE,   /* close without a reply */
    STEP_RESET,   /* close with a TCP reset */
    STEP_HANG,    /* never answer */
    STEP_HUGE,    /* a chunked 200 longer than API_BODY_MAX */
    STEP_REPLY_CLOSE /* send `reply`, then close */
} step_kind;

typedef struct step {
    step_kind kind;
    const char *reply;
} step;

typedef struct conn {
    int fd;
    int id;
    size_t len;
    char buf[REQ_MAX];
} conn;

typedef struct peer {
    int listen_fd, stop[2];
    unsigned port;
    pthread_t thread;
    const step *steps;
    size_t nsteps;
    conn conns[MAX_CONN];
    int nconn;
    /* What the client sent, read by the test after peer_stop. */
    char requests[MAX_REQ][REQ_MAX];
    int conn_of[MAX_REQ];
    size_t nreq;
} peer;

static size_t request_len(const char *buf, size_t len)
{
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end)
        return 0;
    size_t head = (size_t)(end - buf) + 4;
    size_t body = 0;
    for (const char *p = buf; p && p < end; p = memchr(p, '\n', (size_t)(end - p))) {
        p += *p == '\n';
        if (strncasecmp(p, "Content-Length:", 15) == 0)
            body = strtoul(p + 15, NULL, 10);
    }
    return len >= head + body ? head + body : 0;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void close_conn(conn *c, bool reset)
{
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(c->fd);
    c->fd = -1;
}

static void send_huge(conn *c)
{
    static char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    send_all(c->fd, head, strlen(head));
    for (size_t sent = 0; sent <= API_BODY_MAX; sent += sizeof chunk) {
        char size_line[32];
        snprintf(size_line, sizeof size_line, "%zx\r\n", sizeof chunk);
        send_all(c->fd, size_line, strlen(size_line));
        send_all(c->fd, chunk, sizeof chunk);
        send_all(c->fd, "\r\n", 2);
    }
    close_conn(c, false);
}

static void act(peer *p, conn *c)
{
    size_t n = p->nreq;
    const step *s = n < p->nsteps ? &p->steps[n] : &(step){STEP_CLOSE, NULL};
    if (n < MAX_REQ) {
        memcpy(p->requests[n], c->buf, c->len < REQ_MAX ? c->len : REQ_MAX - 1);
        p->conn_of[n] = c->id;
        p->nreq++;
    }
    c->len = 0;
    switch (s->kind) {
    case STEP_REPLY:
    case STEP_REPLY_CLOSE:
        send_all(c->fd, s->reply, strlen(s->reply));
        if (s->kind == STEP_REPLY_CLOSE)
            close_conn(c, false);
        break;
    case STEP_CLOSE:
    case STEP_RESET:
        close_conn(c, s->kind == STEP_RESET);
        break;
    case STEP_HANG:
        break;
    case STEP_HUGE:
        send_huge(c);
        break;
    }
}

static void on_readable(peer *p, conn *c)
{
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, 0);
    if (n <= 0) {
        close_conn(c, false);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    if (request_len(c->buf, c->len))
        act(p, c);
}

static void *peer_main(void *arg)
{
    peer *p = arg;
    for (;;) {
        struct pollfd fds[MAX_CONN + 2];
        int map[MAX_CONN + 2];
        nfds_t n = 0;
        fds[n++] = (struct pollfd){.fd = p->stop[0], .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        for (int i = 0; i < p->nconn; i++) {
            if (p->conns[i].fd >= 0) {
                map[n] = i;
                fds[n++] = (struct pollfd){.fd = p->conns[i].fd, .events = POLLIN};
            }
        }
        if (poll(fds, n, -1) < 0)
            continue;
        if (fds[0].revents)
            break;
        if ((fds[1].revents & POLLIN) && p->nconn < MAX_CONN) {
            int fd = accept(p->listen_fd, NULL, NULL);
            if (fd >= 0)
                p->conns[p->nconn] = (conn){.fd = fd, .id = p->nconn}, p->nconn++;
        }
        for (nfds_t i = 2; i < n; i++) {
            if (fds[i].revents)
                on_readable(p, &p->conns[map[i]]);
        }
    }
    for (int i = 0; i < p->nconn; i++) {
        if (p->conns[i].fd >= 0)
            close(p->conns[i].fd);
    }
    return NULL;
}

static peer *peer_start(const step *steps, size_t nsteps)
{
    peer *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->steps = steps;
    p->nsteps = nsteps;
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p->listen_fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(p->listen_fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(p->listen_fd, 16), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(p->listen_fd, (struct sockaddr *)&sa, &len), 0);
    p->port = ntohs(sa.sin_port);
    assert_int_equal(pipe(p->stop), 0);
    assert_int_equal(pthread_create(&p->thread, NULL, peer_main, p), 0);
    return p;
}

static void peer_stop(peer *p)
{
    assert_int_equal(write(p->stop[1], "x", 1), 1);
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
    close(p->stop[0]);
    close(p->stop[1]);
}

static api_client *client_for(const peer *p, long total_ms, const char *version_header)
{
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u/", p->port);
    return ts_api_client(base, KEY, version_header, total_ms);
}

/* Every result: the key never shows. */
static void no_secret(const sync_result *res)
{
    assert_null(strstr(res->message, KEY));
    assert_null(strstr(res->message, TOKEN));
}

static bool has_line(const char *req, const char *line)
{
    char want[256];
    snprintf(want, sizeof want, "\r\n%s\r\n", line);
    return strstr(req, want) != NULL;
}

static bool starts(const char *req, const char *prefix)
{
    return strncmp(req, prefix, strlen(prefix)) == 0;
}

/* ---- replies ---------------------------------------------------------------- */

static char *reply_of(int status, const char *reason, const char *headers, const char *body)
{
    static char buf[8][4096];
    static int next;
    char *out = buf[next++ % 8];
    snprintf(out, sizeof buf[0],
             "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n%s",
             status, reason, headers ? headers : "", strlen(body), body);
    return out;
}

static char rule_json[1024];

static const char *rule_body(void)
{
    snprintf(rule_json, sizeof rule_json,
             "{\"id\":\"" RULE_ID "\",\"uri\":\"http://x/ip_policy_rules/" RULE_ID "\","
             "\"created_at\":\"2025-09-04T10:11:15Z\",\"cidr\":\"10.0.0.0/8\","
             "\"ip_policy\":{\"id\":\"" POLICY_ID "\",\"uri\":\"http://x/ip_policies/" POLICY_ID
             "\"},\"action\":\"allow\"}");
    return rule_json;
}

static void sample_rule(model_object *o)
{
    model_object_init(o, MODEL_KIND_RULE);
    strcpy(o->rule.cidr, "10.0.0.0/8");
    strcpy(o->rule.policy_id, POLICY_ID);
    o->rule.action = MODEL_ACTION_ALLOW;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_headers_and_paging(void **state)
{
    (void)state;
    static char page1[2048], page2[512];
    step steps[2] = {{STEP_CLOSE, NULL}, {STEP_CLOSE, NULL}};
    peer *p = peer_start(steps, 0);
    snprintf(page1, sizeof page1,
             "{\"ip_policy_rules\":[%s],\"uri\":\"http://127.0.0.1:%u/ip_policy_rules\","
             "\"next_page_uri\":\"http://127.0.0.1:%u/ip_policy_rules?before_id=" RULE_ID
             "&limit=1\"}",
             rule_body(), p->port, p->port);
    snprintf(page2, sizeof page2, "{\"ip_policy_rules\":[],\"uri\":\"u\",\"next_page_uri\":null}");
    steps[0] = (step){STEP_REPLY, reply_of(200, "OK", "Operation-Id: " OP_ID "\r\n", page1)};
    steps[1] = (step){STEP_REPLY, reply_of(200, "OK", NULL, page2)};
    p->nsteps = 2;

    api_client *c = client_for(p, 0, "Acme-Version");
    const sync_api_ops *ops = api_ops();
    codec_page page;
    sync_result res;
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, NULL, &page, &res), SYNC_OK);
    assert_int_equal(res.http_status, 200);
    assert_string_equal(res.operation_id, OP_ID);
    assert_int_equal(page.count, 1);
    assert_int_equal(page.kind, MODEL_KIND_RULE);
    assert_string_equal(page.items[0].rule.id, RULE_ID);
    char next[MODEL_URI_MAX + 1];
    strcpy(next, page.next_page_uri);
    codec_page_free(&page);
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, next, &page, &res), SYNC_OK);
    assert_int_equal(page.count, 0);
    assert_string_equal(page.next_page_uri, "");
    codec_page_free(&page);
    api_client_free(c);
    peer_stop(p);

    assert_int_equal(p->nreq, 2);
    const char *r0 = p->requests[0];
    assert_true(starts(r0, "GET /ip_policy_rules HTTP/1.1\r\n"));
    assert_true(has_line(r0, "Authorization: Bearer " KEY));
    assert_true(has_line(r0, "Acme-Version: 2"));
    assert_true(has_line(r0, "User-Agent: rampart/" RAMPART_VERSION));
    assert_true(has_line(r0, "Accept: application/json"));
    assert_null(strcasestr(r0, "Content-Type"));
    /* The next page exactly as given, on the same connection (keep-alive). */
    assert_true(starts(p->requests[1],
                       "GET /ip_policy_rules?before_id=" RULE_ID "&limit=1 HTTP/1.1\r\n"));
    assert_int_equal(p->conn_of[0], p->conn_of[1]);
    free(p);
}

static void test_create_on_fresh_connection(void **state)
{
    (void)state;
    const char *empty = "{\"ip_policy_rules\":[],\"uri\":\"u\",\"next_page_uri\":null}";
    step steps[] = {
        {STEP_REPLY, reply_of(200, "OK", NULL, empty)},
        {STEP_REPLY, reply_of(201, "Created", NULL, rule_body())},
        {STEP_REPLY, reply_of(200, "OK", NULL, empty)},
        {STEP_REPLY, "HTTP/1.1 204 No Content\r\n\r\n"},
    };
    peer *p = peer_start(steps, 4);
    api_client *c = client_for(p, 0, NULL);
    const sync_api_ops *ops = api_ops();
    codec_page page;
    sync_result res;
    model_object in, out;
    sample_rule(&in);
    strcpy(in.rule.description, "office");
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, NULL, &page, &res), SYNC_OK);
    codec_page_free(&page);
    assert_int_equal(ops->create(c, &in, &out, &res), SYNC_OK);
    assert_int_equal(res.http_status, 201);
    assert_string_equal(out.rule.id, RULE_ID);
    assert_string_equal(out.rule.cidr, "10.0.0.0/8");
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, NULL, &page, &res), SYNC_OK);
    codec_page_free(&page);
    assert_int_equal(ops->remove(c, MODEL_KIND_RULE, RULE_ID, &res), SYNC_OK);
    assert_int_equal(res.http_status, 204);
    api_client_free(c);
    peer_stop(p);

    assert_int_equal(p->nreq, 4);
    const char *post = p->requests[1];
    assert_true(starts(post, "POST /ip_policy_rules HTTP/1.1\r\n"));
    assert_true(has_line(post, "Content-Type: application/json"));
    assert_true(has_line(post, "Service-Version: 2"));
    assert_null(strcasestr(post, "Expect:"));
    assert_non_null(strstr(post, "\"cidr\":\"10.0.0.0/8\""));
    assert_non_null(strstr(post, "\"description\":\"office\""));
    /* The create had a connection of its own; the GET after it went back to the
     * kept-alive one, not to the create's. */
    assert_int_not_equal(p->conn_of[1], p->conn_of[0]);
    assert_int_equal(p->conn_of[2], p->conn_of[0]);
    assert_true(starts(p->requests[3], "DELETE /ip_policy_rules/" RULE_ID " HTTP/1.1\r\n"));
    assert_int_equal(p->conn_of[3], p->conn_of[0]);
    free(p);
}

/* The peer drops the create without a reply. Had the POST gone out on the
 * kept-alive connection, libcurl would take the drop for a stale connection and
 * silently send it again: exactly one POST must arrive. */
static void test_create_dropped_sent_once(void **state)
{
    (void)state;
    const char *empty = "{\"ip_policy_rules\":[],\"uri\":\"u\",\"next_page_uri\":null}";
    step steps[] = {
        {STEP_REPLY, reply_of(200, "OK", NULL, empty)},
        {STEP_CLOSE, NULL},
        {STEP_REPLY, reply_of(200, "OK", NULL, empty)},
    };
    peer *p = peer_start(steps, 3);
    api_client *c = client_for(p, 0, NULL);
    codec_page page;
    sync_result res;
    model_object in, out;
    sample_rule(&in);
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_RULE, NULL, &page, &res), SYNC_OK);
    codec_page_free(&page);
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_AMBIGUOUS);
    assert_string_equal(out.rule.id, "");
    assert_int_equal(res.http_status, 0);
    assert_int_equal(res.failure, SYNC_FAILURE_CONNECTION_LOST);
    assert_non_null(strstr(res.message, "after the request was sent"));
    no_secret(&res);
    /* The client is still usable. */
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_RULE, NULL, &page, &res), SYNC_OK);
    codec_page_free(&page);
    api_client_free(c);
    peer_stop(p);
    assert_int_equal(p->nreq, 3);
    size_t posts = 0;
    for (size_t i = 0; i < p->nreq; i++)
        posts += starts(p->requests[i], "POST ");
    assert_int_equal(posts, 1);
    free(p);
}

typedef struct fault_case {
    step s;
    sync_outcome want;
    int status;
    const char *message_part;
    sync_failure_kind failure;
} fault_case;

static void run_rule_create(const fault_case *fc, long total_ms)
{
    peer *p = peer_start(&fc->s, 1);
    api_client *c = client_for(p, total_ms, NULL);
    model_object in, out;
    sample_rule(&in);
    sync_result res;
    sync_outcome got = api_ops()->create(c, &in, &out, &res);
    if (got != fc->want || res.http_status != fc->status ||
        !strstr(res.message, fc->message_part) || res.failure != fc->failure)
        fail_msg("got outcome %d, HTTP %d, '%s', %s; want %d, HTTP %d, '%s', %s", (int)got,
                 res.http_status, res.message, sync_failure_name(res.failure), (int)fc->want,
                 fc->status, fc->message_part, sync_failure_name(fc->failure));
    if (got != SYNC_OK)
        assert_string_equal(out.rule.id, "");
    no_secret(&res);
    api_client_free(c);
    peer_stop(p);
    assert_int_equal(p->nreq, 1);
    free(p);
}

static void test_create_faults(void **state)
{
    (void)state;
    static char truncated[512];
    snprintf(truncated, sizeof truncated,
             "HTTP/1.1 201 Created\r\nContent-Length: 400\r\n\r\n%.60s", rule_body());
    const fault_case cases[] = {
        {{STEP_RESET, NULL}, SYNC_AMBIGUOUS, 0, "after the request was sent",
         SYNC_FAILURE_CONNECTION_LOST},
        {{STEP_REPLY_CLOSE, truncated}, SYNC_AMBIGUOUS, 201, "cut short",
         SYNC_FAILURE_CONNECTION_LOST},
        {{STEP_REPLY, reply_of(201, "Created", NULL, "{\"cidr\":\"10.0.0.0/8\"}")},
         SYNC_AMBIGUOUS, 201, "could not be read", SYNC_FAILURE_BAD_REPLY},
        {{STEP_REPLY, reply_of(201, "Created", NULL, "not json " KEY)}, SYNC_AMBIGUOUS, 201,
         "HTTP 201", SYNC_FAILURE_BAD_REPLY},
        {{STEP_REPLY, reply_of(502, "Bad Gateway", NULL, "<html>oops</html>")}, SYNC_AMBIGUOUS,
         502, "HTTP 502 from the server", SYNC_FAILURE_SERVER_ERROR},
        {{STEP_REPLY,
          reply_of(400, "Bad Request", "X-Operation-Id: " OP_ID "\r\n",
                   "{\"error_code\":\"E1\",\"status_code\":400,\"msg\":\"host bits set\"}")},
         SYNC_REJECTED, 400, "host bits set (operation " OP_ID ")", SYNC_FAILURE_REJECTED},
        {{STEP_REPLY, reply_of(401, "Unauthorized", NULL, "{\"msg\":\"bad key\"}")}, SYNC_AUTH,
         401, "bad key", SYNC_FAILURE_AUTH},
        {{STEP_REPLY, reply_of(429, "Too Many Requests", NULL, "{}")}, SYNC_RATE_LIMITED, 429,
         "HTTP 429", SYNC_FAILURE_RATE_LIMITED},
        {{STEP_REPLY, "HTTP/1.1 301 Moved\r\nLocation: http://127.0.0.1:1/\r\n"
                      "Content-Length: 0\r\n\r\n"},
         SYNC_REJECTED, 301, "not followed", SYNC_FAILURE_REJECTED},
        {{STEP_HUGE, NULL}, SYNC_AMBIGUOUS, 200, "larger than 16 MiB",
         SYNC_FAILURE_CONNECTION_LOST},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_rule_create(&cases[i], 0);
}

static void test_timeout_after_sending(void **state)
{
    (void)state;
    const fault_case fc = {{STEP_HANG, NULL}, SYNC_AMBIGUOUS, 0, "timed out",
                           SYNC_FAILURE_TIMED_OUT};
    run_rule_create(&fc, 300);
}

static void test_retry_after_on_the_wire(void **state)
{
    (void)state;
    step steps[] = {
        {STEP_REPLY, reply_of(429, "Too Many Requests", "Retry-After: 3\r\n", "{}")},
        {STEP_REPLY, reply_of(429, "Too Many Requests", NULL, "{}")},
    };
    peer *p = peer_start(steps, 2);
    api_client *c = client_for(p, 0, NULL);
    sync_result res;
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_CRED, CRED_ID, &res), SYNC_RATE_LIMITED);
    assert_true(res.retry_after_s == 3.0);
    /* The next reply's missing header is not confused with the last one's. */
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_CRED, CRED_ID, &res), SYNC_RATE_LIMITED);
    assert_true(res.retry_after_s < 0);
    api_client_free(c);
    peer_stop(p);
    assert_true(starts(p->requests[0], "DELETE /credentials/" CRED_ID " HTTP/1.1\r\n"));
    free(p);
}

static void test_cred_create(void **state)
{
    (void)state;
    const char *with_token =
        "{\"id\":\"" CRED_ID "\",\"uri\":\"u\",\"created_at\":\"2025-09-04T10:11:15Z\","
        "\"description\":\"ci\",\"metadata\":\"rampart-create=local_1\",\"token\":\"" TOKEN
        "\",\"acl\":[\"bind:*.example.com\"],\"owner_id\":\"usr_1\"}";
    const char *without_token = "{\"id\":\"" CRED_ID "\",\"token\":null,\"acl\":[]}";
    step steps[] = {
        {STEP_REPLY, reply_of(201, "Created", NULL, with_token)},
        {STEP_REPLY, reply_of(201, "Created", NULL, without_token)},
    };
    peer *p = peer_start(steps, 2);
    api_client *c = client_for(p, 0, NULL);
    model_object in, out;
    ts_cred_init(&in, "ci", "rampart-create=local_1", "bind:*.example.com");
    sync_result res;
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_OK);
    assert_int_equal(out.kind, MODEL_KIND_CRED);
    assert_string_equal(out.cred.id, CRED_ID);
    assert_string_equal(out.cred.token, TOKEN);
    assert_int_equal(out.cred.acl.count, 1);
    model_object_clear(&out);
    /* A 201 without the token: the credential exists but is useless here. */
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_AMBIGUOUS);
    assert_non_null(strstr(res.message, "no token"));
    assert_int_equal(res.failure, SYNC_FAILURE_BAD_REPLY);
    assert_null(out.cred.token);
    assert_string_equal(out.cred.id, "");
    no_secret(&res);
    model_object_clear(&in);
    api_client_free(c);
    peer_stop(p);
    assert_true(starts(p->requests[0], "POST /credentials HTTP/1.1\r\n"));
    assert_non_null(strstr(p->requests[0], "\"acl\":[\"bind:*.example.com\"]"));
    assert_non_null(strstr(p->requests[0], "rampart-create=local_1"));
    assert_int_not_equal(p->conn_of[0], p->conn_of[1]);
    free(p);
}

static void test_delete_outcomes(void **state)
{
    (void)state;
    step steps[] = {
        {STEP_REPLY, reply_of(404, "Not Found", NULL,
                              "{\"msg\":\"not found\",\"details\":{\"operation_id\":\"" OP_ID
                              "\"}}")},
    };
    peer *p = peer_start(steps, 1);
    api_client *c = client_for(p, 0, NULL);
    sync_result res;
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, RULE_ID, &res), SYNC_NOT_FOUND);
    assert_string_equal(res.operation_id, OP_ID);
    /* Not a remote id: refused here, nothing sent. */
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, "local_2Cs8abc", &res),
                     SYNC_REJECTED);
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, "ipr_../../x", &res), SYNC_REJECTED);
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_CRED, RULE_ID, &res), SYNC_REJECTED);
    api_client_free(c);
    peer_stop(p);
    assert_int_equal(p->nreq, 1);
    free(p);
}

static void test_pages_refused(void **state)
{
    (void)state;
    static char self[512];
    peer *p = peer_start(NULL, 0);
    snprintf(self, sizeof self,
             "{\"credentials\":[],\"uri\":\"u\",\"next_page_uri\":\"http://127.0.0.1:%u"
             "/credentials?limit=1\"}",
             p->port);
    step steps[] = {
        {STEP_REPLY, reply_of(200, "OK", NULL, self)},
        {STEP_REPLY, reply_of(200, "OK", NULL,
                             "{\"credentials\":[{\"acl\":[]}],\"next_page_uri\":null}")},
    };
    p->steps = steps;
    p->nsteps = 2;
    api_client *c = client_for(p, 0, NULL);
    codec_page page;
    sync_result res;
    char url[128];
    /* Another port of the same host is another server: the key stays here. */
    snprintf(url, sizeof url, "http://127.0.0.1:%u/credentials?limit=1", p->port + 1);
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_CRED, url, &page, &res), SYNC_REJECTED);
    assert_non_null(strstr(res.message, "refusing to send the API key"));
    assert_int_equal(page.count, 0);
    /* A next link pointing at the page itself would loop. */
    snprintf(url, sizeof url, "http://127.0.0.1:%u/credentials?limit=1", p->port);
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_CRED, url, &page, &res),
                     SYNC_AMBIGUOUS);
    assert_non_null(strstr(res.message, "same page"));
    assert_null(page.items);
    /* An item without an id makes the listing incomplete. */
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_CRED, NULL, &page, &res),
                     SYNC_AMBIGUOUS);
    assert_non_null(strstr(res.message, "credential 1"));
    api_client_free(c);
    peer_stop(p);
    assert_int_equal(p->nreq, 2);
    free(p);
}

static void test_not_sent(void **state)
{
    (void)state;
    peer *p = peer_start(NULL, 0);
    api_client *c = client_for(p, 0, NULL);
    peer_stop(p); /* nothing listens on the port any more */
    model_object in, out;
    sample_rule(&in);
    sync_result res;
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_NOT_SENT);
    assert_int_equal(res.http_status, 0);
    assert_int_equal(res.failure, SYNC_FAILURE_UNREACHABLE);
    assert_non_null(strstr(res.message, "could not reach the server"));
    no_secret(&res);
    api_client_free(c);
    free(p);
}

/* An edit on the wire: PATCH to the object's path with only the fields asked for
 * and Content-Type, on the kept-alive connection (an edit sent twice is the same
 * edit); a GET of one object; a reply about another object, and 404s. */
static void test_update_and_get_on_the_wire(void **state)
{
    (void)state;
    const char *gone = "{\"error_code\":\"ERR_NOT_FOUND\",\"msg\":\"no rule\","
                       "\"details\":{\"operation_id\":\"" OP_ID "\"}}";
    step steps[] = {
        {STEP_REPLY, reply_of(200, "OK", NULL, rule_body())},
        {STEP_REPLY, reply_of(200, "OK", NULL, rule_body())},
        {STEP_REPLY, reply_of(200, "OK", NULL, rule_body())},
        {STEP_REPLY, reply_of(404, "Not Found", NULL, gone)},
        {STEP_REPLY, reply_of(404, "Not Found", NULL, gone)},
    };
    peer *p = peer_start(steps, 5);
    api_client *c = client_for(p, 0, NULL);
    const sync_api_ops *ops = api_ops();
    model_object in, out;
    sample_rule(&in);
    strcpy(in.rule.id, RULE_ID);
    strcpy(in.rule.description, "office");
    const kind_field *cidr = kind_field_by_name(MODEL_KIND_RULE, "cidr");
    const kind_field *desc = kind_field_by_name(MODEL_KIND_RULE, "description");
    unsigned fields = kind_field_bit(MODEL_KIND_RULE, cidr) | kind_field_bit(MODEL_KIND_RULE, desc);
    sync_result res;
    assert_int_equal(ops->update(c, &in, fields, &out, &res), SYNC_OK);
    assert_int_equal(res.http_status, 200);
    assert_string_equal(out.rule.id, RULE_ID);
    model_object_clear(&out);
    assert_int_equal(ops->get(c, MODEL_KIND_RULE, RULE_ID, &out, &res), SYNC_OK);
    assert_string_equal(out.rule.cidr, "10.0.0.0/8");
    model_object_clear(&out);
    /* Asked for one object, answered with another: not a reply to record. */
    const char *other = "ipr_2Cs8WqYF3xV8eO7cLbM1sQ9pZkU";
    assert_int_equal(ops->get(c, MODEL_KIND_RULE, other, &out, &res), SYNC_AMBIGUOUS);
    assert_int_equal(res.failure, SYNC_FAILURE_BAD_REPLY);
    assert_non_null(strstr(res.message, "another rule"));
    assert_int_equal(ops->update(c, &in, fields, &out, &res), SYNC_NOT_FOUND);
    assert_string_equal(res.operation_id, OP_ID);
    no_secret(&res);
    assert_int_equal(ops->get(c, MODEL_KIND_RULE, RULE_ID, &out, &res), SYNC_NOT_FOUND);
    assert_int_equal(res.http_status, 404);
    /* Not a remote id of the kind: nothing sent. */
    assert_int_equal(ops->get(c, MODEL_KIND_CRED, RULE_ID, &out, &res), SYNC_REJECTED);
    api_client_free(c);
    peer_stop(p);

    assert_int_equal(p->nreq, 5);
    const char *patch = p->requests[0];
    assert_true(starts(patch, "PATCH /ip_policy_rules/" RULE_ID " HTTP/1.1\r\n"));
    assert_true(has_line(patch, "Content-Type: application/json"));
    assert_true(has_line(patch, "Authorization: Bearer " KEY));
    assert_null(strcasestr(patch, "Expect:"));
    const char *body = strstr(patch, "\r\n\r\n");
    assert_non_null(body);
    assert_string_equal(body + 4, "{\"cidr\":\"10.0.0.0/8\",\"description\":\"office\"}");
    const char *get = p->requests[1];
    assert_true(starts(get, "GET /ip_policy_rules/" RULE_ID " HTTP/1.1\r\n"));
    assert_null(strcasestr(get, "Content-Type"));
    assert_true(starts(p->requests[2], "GET /ip_policy_rules/ipr_2Cs8WqYF3xV8eO7cLbM1sQ9pZkU "));
    /* One connection for all: PATCH and GET keep it alive. */
    for (size_t i = 1; i < p->nreq; i++)
        assert_int_equal(p->conn_of[i], p->conn_of[0]);
    free(p);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    /* A proxy from the environment must not be used for a server on loopback:
     * every test would fail to reach its peer through this dead one. */
    setenv("http_proxy", "http://127.0.0.1:9", 1);
    setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headers_and_paging),
        cmocka_unit_test(test_create_on_fresh_connection),
        cmocka_unit_test(test_create_dropped_sent_once),
        cmocka_unit_test(test_create_faults),
        cmocka_unit_test(test_timeout_after_sending),
        cmocka_unit_test(test_retry_after_on_the_wire),
        cmocka_unit_test(test_cred_create),
        cmocka_unit_test(test_delete_outcomes),
        cmocka_unit_test(test_pages_refused),
        cmocka_unit_test(test_not_sent),
        cmocka_unit_test(test_update_and_get_on_the_wire),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
