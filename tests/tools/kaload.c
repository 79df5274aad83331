/*
 * kaload: a keep-alive HTTP/1.1 load client for the agent's bench, over loopback
 * TCP or a unix socket (wrk speaks TCP only; the bench measures both servers of
 * a row with the same client).
 *
 *   kaload ADDR PATH [-c CONNS] [-t THREADS] [-d SECONDS] [-k KEYFILE]
 *       ADDR is tcp:127.x.y.z:PORT or unix:PATH. CONNS connections (default
 *       64) spread over THREADS threads (default 2), each sending
 *       "GET PATH HTTP/1.1" with "Host: localhost" (and "Authorization: Bearer
 *       <first line of KEYFILE>": the key never on argv), the next request as
 *       soon as the reply is in, for SECONDS seconds (default 10). Prints one
 *       line: "requests=N seconds=S rps=R p50_ms=X p99_ms=X max_ms=X non2xx=N
 *       errors=N". A reply counts once read whole (by its Content-Length: a
 *       reply without one is an error); its latency runs from the request's
 *       write. A connection the server closes or breaks is an error and is
 *       opened again. Exit 0 when replies came and no error happened.
 *
 * Only loopback addresses are accepted: this is a test tool, not a weapon.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
    CONNS_MAX = 4096,
    THREADS_MAX = 64,
    REQ_MAX = 2048,
    KEY_MAX = 512,
    REPLY_MAX = 16384,
    BUCKET_US = 10,   /* the latency histogram: 10 us buckets … */
    BUCKETS = 100000, /* … up to 1 s; longer ones count in the last */
    EVENTS = 64
};

typedef struct target {
    struct sockaddr_storage addr;
    socklen_t len;
    int family;
} target;

typedef struct conn {
    int fd;
    size_t sent;    /* bytes of the request written */
    size_t got;     /* bytes of the reply read */
    double started; /* ms: when the request was written */
    bool want_out;  /* EPOLLOUT asked for: the request did not fit at once */
    char reply[REPLY_MAX];
} conn;

typedef struct worker {
    pthread_t thread;
    const target *to;
    const char *req;
    size_t req_len;
    double until; /* ms */
    int ep;
    size_t nconns;
    conn *conns;
    unsigned long requests, non2xx, errors;
    double max_ms;
    unsigned long *hist; /* BUCKETS counts */
} worker;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool parse_unix(const char *path, target *t)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof un.sun_path)
        return false;
    memcpy(un.sun_path, path, n + 1);
    memcpy(&t->addr, &un, sizeof un);
    t->len = (socklen_t)sizeof un;
    t->family = AF_UNIX;
    return true;
}

static bool parse_tcp(const char *text, target *t)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host)
        return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    struct sockaddr_in in = {.sin_family = AF_INET};
    long port = strtol(colon + 1, NULL, 10);
    if (inet_pton(AF_INET, host, &in.sin_addr) != 1 || port <= 0 || port > 65535 ||
        (ntohl(in.sin_addr.s_addr) >> 24) != 127)
        return false;
    in.sin_port = htons((unsigned short)port);
    memcpy(&t->addr, &in, sizeof in);
    t->len = (socklen_t)sizeof in;
    t->family = AF_INET;
    return true;
}

static bool parse_target(const char *text, target *t)
{
    memset(t, 0, sizeof *t);
    if (strncmp(text, "unix:", 5) == 0)
        return parse_unix(text + 5, t);
    return strncmp(text, "tcp:", 4) == 0 && parse_tcp(text + 4, t);
}

/* ---- one connection ---- */

/* Connected (loopback: at once), then non-blocking and watched. False on failure. */
static bool conn_open(worker *w, conn *c)
{
    c->sent = c->got = 0;
    c->want_out = false;
    c->fd = socket(w->to->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return false;
    if (connect(c->fd, (const struct sockaddr *)&w->to->addr, w->to->len) != 0) {
        close(c->fd);
        c->fd = -1;
        return false;
    }
    int one = 1;
    if (w->to->family == AF_INET)
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    return epoll_ctl(w->ep, EPOLL_CTL_ADD, c->fd, &ev) == 0;
}

static void conn_close(conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* Write (the rest of) the request; the socket's buffer takes it whole in practice,
 * else EPOLLOUT says when to go on. False when the connection broke. */
static bool conn_send(worker *w, conn *c)
{
    if (c->sent == 0)
        c->started = now_ms();
    while (c->sent < w->req_len) {
        ssize_t n = send(c->fd, w->req + c->sent, w->req_len - c->sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
            c->want_out = true;
            return epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
        }
        if (n <= 0)
            return false;
        c->sent += (size_t)n;
    }
    if (!c->want_out)
        return true;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    c->want_out = false;
    return epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

/* Broken, or closed by the server: an error, and a fresh connection. */
static void conn_restart(worker *w, conn *c)
{
    w->errors++;
    conn_close(c);
    if (conn_open(w, c) && !conn_send(w, c))
        conn_close(c);
}

/* The reply's size (head and body) once its head is in: 0 while incomplete,
 * (size_t)-1 when it has no Content-Length. */
static size_t reply_size(const conn *c)
{
    const char *end = memmem(c->reply, c->got, "\r\n\r\n", 4);
    if (!end)
        return 0;
    size_t head = (size_t)(end - c->reply) + 4;
    for (const char *p = c->reply; p < end;) {
        const char *eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
        if (!eol)
            break;
        if ((size_t)(eol - p) > 15 && strncasecmp(p, "Content-Length:", 15) == 0)
            return head + (size_t)strtoul(p + 15, NULL, 10);
        p = eol + 2;
    }
    return (size_t)-1;
}

static void record(worker *w, const conn *c, double now)
{
    double ms = now - c->started;
    size_t b = (size_t)(ms * 1000.0 / BUCKET_US);
    w->hist[b < BUCKETS ? b : BUCKETS - 1]++;
    if (ms > w->max_ms)
        w->max_ms = ms;
    w->requests++;
    int status = c->got > 12 ? atoi(c->reply + 9) : 0;
    if (status < 200 || status > 299)
        w->non2xx++;
}

/* Read what came; a whole reply is counted and the next request sent. */
static void conn_read(worker *w, conn *c)
{
    for (;;) {
        if (c->got == sizeof c->reply) {
            conn_restart(w, c); /* a reply larger than this tool reads */
            return;
        }
        ssize_t n = recv(c->fd, c->reply + c->got, sizeof c->reply - c->got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            conn_restart(w, c);
            return;
        }
        c->got += (size_t)n;
        size_t size = reply_size(c);
        if (size == (size_t)-1) {
            conn_restart(w, c);
            return;
        }
        if (size == 0 || c->got < size)
            continue;
        record(w, c, now_ms());
        c->got = c->sent = 0;
        if (!conn_send(w, c)) {
            conn_restart(w, c);
            return;
        }
    }
}

/* ---- a thread's connections ---- */

static void *run(void *arg)
{
    worker *w = arg;
    for (size_t i = 0; i < w->nconns; i++) {
        conn *c = &w->conns[i];
        if (!conn_open(w, c) || !conn_send(w, c)) {
            w->errors++;
            conn_close(c);
        }
    }
    struct epoll_event evs[EVENTS];
    while (now_ms() < w->until) {
        int n = epoll_wait(w->ep, evs, EVENTS, 100);
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if ((evs[i].events & EPOLLOUT) && c->sent < w->req_len && !conn_send(w, c))
                conn_restart(w, c);
            else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                conn_read(w, c);
        }
    }
    for (size_t i = 0; i < w->nconns; i++)
        conn_close(&w->conns[i]);
    return NULL;
}

/* ---- setup and the figures ---- */

static bool read_key(const char *path, char *key, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(key, (int)size, f) != NULL;
    fclose(f);
    key[strcspn(key, "\r\n")] = '\0';
    return ok && key[0];
}

static double percentile(const unsigned long *hist, unsigned long total, double q)
{
    unsigned long want = (unsigned long)((double)total * q), seen = 0;
    for (size_t b = 0; b < BUCKETS; b++) {
        seen += hist[b];
        if (seen > want)
            return (double)(b + 1) * BUCKET_US / 1000.0; /* the bucket's upper edge */
    }
    return (double)BUCKETS * BUCKET_US / 1000.0;
}

typedef struct options {
    const char *addr, *path, *key_file;
    long conns, threads, seconds;
} options;

static bool parse_args(int argc, char **argv, options *o)
{
    *o = (options){.conns = 64, .threads = 2, .seconds = 10};
    if (argc < 3)
        return false;
    o->addr = argv[1];
    o->path = argv[2];
    for (int i = 3; i + 1 < argc; i += 2) {
        const char *v = argv[i + 1];
        if (strcmp(argv[i], "-c") == 0)
            o->conns = strtol(v, NULL, 10);
        else if (strcmp(argv[i], "-t") == 0)
            o->threads = strtol(v, NULL, 10);
        else if (strcmp(argv[i], "-d") == 0)
            o->seconds = strtol(v, NULL, 10);
        else if (strcmp(argv[i], "-k") == 0)
            o->key_file = v;
        else
            return false;
    }
    return (argc - 3) % 2 == 0 && o->conns > 0 && o->conns <= CONNS_MAX && o->threads > 0 &&
           o->threads <= THREADS_MAX && o->threads <= o->conns && o->seconds > 0 &&
           o->path[0] == '/';
}

static int usage(void)
{
    fprintf(stderr, "usage: kaload tcp:127.0.0.1:PORT|unix:PATH /PATH [-c CONNS] "
                    "[-t THREADS] [-d SECONDS] [-k KEYFILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    options o;
    target to;
    if (!parse_args(argc, argv, &o) || !parse_target(o.addr, &to))
        return usage();
    char key[KEY_MAX] = "", auth[KEY_MAX + 32] = "", req[REQ_MAX];
    if (o.key_file && !read_key(o.key_file, key, sizeof key)) {
        fprintf(stderr, "kaload: cannot read a key from %s\n", o.key_file);
        return 2;
    }
    if (key[0])
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", key);
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n", o.path,
                       auth);
    if (len < 0 || (size_t)len >= sizeof req)
        return usage();
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    worker ws[THREADS_MAX];
    double start = now_ms();
    for (long i = 0; i < o.threads; i++) {
        worker *w = &ws[i];
        *w = (worker){.to = &to, .req = req, .req_len = (size_t)len,
                      .until = start + 1e3 * (double)o.seconds,
                      .nconns = (size_t)(o.conns / o.threads + (i < o.conns % o.threads))};
        w->ep = epoll_create1(EPOLL_CLOEXEC);
        w->conns = calloc(w->nconns, sizeof *w->conns);
        w->hist = calloc(BUCKETS, sizeof *w->hist);
        if (w->ep < 0 || !w->conns || !w->hist ||
            pthread_create(&w->thread, NULL, run, w) != 0) {
            fprintf(stderr, "kaload: out of resources\n");
            return 1;
        }
    }
    unsigned long *hist = calloc(BUCKETS, sizeof *hist);
    unsigned long requests = 0, non2xx = 0, errors = 0;
    double max_ms = 0;
    for (long i = 0; i < o.threads; i++) {
        worker *w = &ws[i];
        pthread_join(w->thread, NULL);
        for (size_t b = 0; hist && b < BUCKETS; b++)
            hist[b] += w->hist[b];
        requests += w->requests;
        non2xx += w->non2xx;
        errors += w->errors;
        max_ms = w->max_ms > max_ms ? w->max_ms : max_ms;
        close(w->ep);
        free(w->conns);
        free(w->hist);
    }
    double secs = (now_ms() - start) / 1e3;
    if (!hist)
        return 1;
    printf("requests=%lu seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f "
           "non2xx=%lu errors=%lu\n", requests, secs, (double)requests / secs,
           percentile(hist, requests, 0.50), percentile(hist, requests, 0.99), max_ms, non2xx,
           errors);
    free(hist);
    return requests > 0 && errors == 0 ? 0 : 1;
}
