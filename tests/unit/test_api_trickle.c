/* The API client's low-speed limit over a real loopback socket: a server that
 * answers a byte a second (a reply that would take minutes) is timed out by the
 * limit (api_config.low_speed_bps / low_speed_s), not by the total timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rampart/api.h"
#include "rampart/codec.h"
#include "test_support.h"

#define KEY "sk_test_2Cs8SecretSecretSecret"

typedef struct trickler {
    int listen_fd, stop[2];
    unsigned port;
    pthread_t thread;
    int bytes_sent; /* of the body, read after the thread ended */
} trickler;

static void send_text(int fd, const char *text)
{
    (void)send(fd, text, strlen(text), MSG_NOSIGNAL);
}

/* Wait up to `ms` for the stop pipe; true when told to stop. */
static bool stop_within(trickler *t, int ms)
{
    struct pollfd pfd = {.fd = t->stop[0], .events = POLLIN};
    return poll(&pfd, 1, ms) > 0;
}

/* Read the request head (or until the client gives up). */
static void read_head(int fd)
{
    char buf[4096];
    size_t len = 0;
    while (len < sizeof buf - 1) {
        ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0)
            return;
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            return;
    }
}

/* One connection: the status line and headers at once, then the body a byte a
 * second, until the client hangs up or the test ends. */
static void *trickle_main(void *arg)
{
    trickler *t = arg;
    int fd = accept(t->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    read_head(fd);
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  "Content-Length: 4096\r\n\r\n");
    while (!stop_within(t, 1000)) {
        if (send(fd, "{", 1, MSG_NOSIGNAL) != 1)
            break;
        t->bytes_sent++;
    }
    close(fd);
    return NULL;
}

static trickler *trickler_start(void)
{
    trickler *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(t->listen_fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(t->listen_fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(t->listen_fd, 4), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(t->listen_fd, (struct sockaddr *)&sa, &len), 0);
    t->port = ntohs(sa.sin_port);
    assert_int_equal(pipe(t->stop), 0);
    assert_int_equal(pthread_create(&t->thread, NULL, trickle_main, t), 0);
    return t;
}

static void trickler_stop(trickler *t)
{
    assert_int_equal(write(t->stop[1], "x", 1), 1);
    pthread_join(t->thread, NULL);
    close(t->listen_fd);
    close(t->stop[0]);
    close(t->stop[1]);
    free(t);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static api_client *client_for(const trickler *t, long low_bps, long low_s)
{
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", t->port);
    api_config cfg = {.base_url = base, .api_key = KEY, .total_timeout_ms = 120000,
                      .low_speed_bps = low_bps, .low_speed_s = low_s};
    api_client *c = NULL;
    error_info err = {0};
    if (api_client_new(&cfg, &c, &err) != ERROR_OK)
        fail_msg("api_client_new: %s", err.msg);
    return c;
}

/* A reply at a byte a second, under a limit of 10 bytes/s for 2 s: timed out
 * long before the 120 s total timeout (the bound is loose so it cannot flake). */
static void test_trickling_reply_hits_the_low_speed_limit(void **state)
{
    (void)state;
    trickler *t = trickler_start();
    api_client *c = client_for(t, 10, 2);
    codec_page page;
    sync_result res;
    double start = seconds_now();
    sync_outcome out = api_ops()->list_page(c, MODEL_KIND_RULE, NULL, &page, &res);
    double took = seconds_now() - start;
    codec_page_free(&page);
    api_client_free(c);
    trickler_stop(t);
    assert_int_equal(out, SYNC_AMBIGUOUS);
    assert_int_equal(res.failure, SYNC_FAILURE_TIMED_OUT);
    assert_non_null(strstr(res.message, "timed out"));
    assert_true(took < 40.0);
}

/* A negative limit is a configuration error, caught before any request. */
static void test_negative_low_speed_is_refused(void **state)
{
    (void)state;
    api_config cfg = {.base_url = "http://127.0.0.1:9", .api_key = KEY, .low_speed_bps = -1,
                      .low_speed_s = 5};
    api_client *c = NULL;
    error_info err = {0};
    assert_int_equal(api_client_new(&cfg, &c, &err), ERROR_CONFIG);
    assert_null(c);
    assert_non_null(strstr(err.msg, "low-speed"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trickling_reply_hits_the_low_speed_limit),
        cmocka_unit_test(test_negative_low_speed_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
