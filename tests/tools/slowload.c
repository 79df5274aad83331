/*
 * slowload: a slow-header client for the agent's tests and bench (issue 14).
 *
 *   slowload hold HOST:PORT N [GAP_MS]
 *       Keeps N connections open, each sending a request head that never ends
 *       ("GET / HTTP/1.1", then padding), one byte every GAP_MS ms (default 200):
 *       never idle long enough for an idle timer. A connection the server cuts is
 *       counted and opened again at once (what a determined client does). Runs
 *       until SIGTERM/SIGINT. Prints "open=N opened=N cut=N failed=N" (open: the
 *       connections held now; cut: closed by the server after their connect;
 *       failed: connects that did not get through) whenever the figures change
 *       (at most every 50 ms), and once more at exit.
 *
 *   slowload probe HOST:PORT PATH KEYFILE COUNT
 *       COUNT requests one after another, each on a new connection (as an agent
 *       that starts up does), with "Authorization: Bearer <first line of
 *       KEYFILE>" (the key never on argv) and a 5 s limit each. Prints
 *       "ok=N failed=N p50_ms=X p99_ms=X max_ms=X"; ok: a 200 reply. Exit 0 when
 *       every request got its 200.
 *
 * Only loopback addresses are accepted: this is a test tool, not a weapon.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { HOLD_MAX = 4096, PROBE_MAX = 100000, REPLY_MAX = 8192, KEY_MAX = 512 };

static const char head[] = "GET /v1/tokens/web HTTP/1.1\r\nHost: localhost\r\nX-Pad: ";

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool parse_addr(const char *text, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host)
        return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    long port = strtol(colon + 1, NULL, 10);
    if (inet_pton(AF_INET, host, &out->sin_addr) != 1 || port <= 0 || port > 65535 ||
        (ntohl(out->sin_addr.s_addr) >> 24) != 127)
        return false;
    out->sin_port = htons((unsigned short)port);
    return true;
}

/* A non-blocking connect under way (or done): the fd, or -1. */
static int open_conn(const struct sockaddr_in *a)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)a, sizeof *a) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Many sockets: lift the soft limit to the hard one. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- hold ---- */

typedef struct slot {
    int fd;
    size_t sent;     /* bytes of the head sent */
    double next;     /* when the next byte goes */
} slot;

typedef struct tally {
    long open, opened, cut, failed;
} tally;

static void report(const tally *t)
{
    printf("open=%ld opened=%ld cut=%ld failed=%ld\n", t->open, t->opened, t->cut,
           t->failed);
    fflush(stdout);
}

static void reopen(slot *s, const struct sockaddr_in *a, tally *t, double now)
{
    s->fd = open_conn(a);
    s->sent = 0;
    s->next = now;
    if (s->fd < 0) {
        t->failed++;
        return;
    }
    t->opened++;
    t->open++;
}

/* The server closed it (err 0 or a reset) or the connect failed (refused):
 * counted, then opened again. */
static void lost(slot *s, int err, const struct sockaddr_in *a, tally *t, double now)
{
    close(s->fd);
    t->open--;
    if (err == ECONNREFUSED || err == ETIMEDOUT)
        t->failed++;
    else
        t->cut++;
    reopen(s, a, t, now);
}

/* After poll said something: -1 while the connection lives, else the errno of its
 * end (0: an orderly close). */
static int ended(const slot *s)
{
    char buf[256];
    ssize_t r = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r > 0)
        return -1; /* a reply to half a head: the close follows */
    if (r == 0)
        return 0;
    return errno == EAGAIN || errno == EINTR ? -1 : errno;
}

/* One byte of the endless head: -1 when sent (or to be tried again), else the
 * errno of the socket's end. */
static int send_byte(slot *s, unsigned gap_ms, double now)
{
    char c = s->sent < sizeof head - 1 ? head[s->sent] : 'a';
    ssize_t n = send(s->fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == ENOTCONN))
        return -1; /* still connecting, or the buffer is full: next time */
    if (n < 0)
        return errno;
    s->sent++;
    s->next = now + gap_ms;
    return -1;
}

static int hold(const struct sockaddr_in *a, long n, unsigned gap_ms)
{
    static slot slots[HOLD_MAX];
    static struct pollfd pfd[HOLD_MAX];
    tally t = {0}, shown = {-1, -1, -1, -1};
    double now = now_ms(), last_report = 0;
    for (long i = 0; i < n; i++) /* first bytes spread over one gap */
        reopen(&slots[i], a, &t, now + (double)(i % (long)gap_ms));
    while (!stopping) {
        for (long i = 0; i < n; i++)
            pfd[i] = (struct pollfd){.fd = slots[i].fd, .events = POLLIN};
        poll(pfd, (nfds_t)n, 10);
        now = now_ms();
        for (long i = 0; i < n; i++) {
            slot *s = &slots[i];
            if (s->fd < 0) {
                reopen(s, a, &t, now);
                continue;
            }
            int err = pfd[i].revents ? ended(s) : -1;
            if (err < 0 && now >= s->next)
                err = send_byte(s, gap_ms, now);
            if (err >= 0)
                lost(s, err, a, &t, now);
        }
        if (memcmp(&t, &shown, sizeof t) != 0 && now - last_report >= 50) {
            report(&t);
            shown = t;
            last_report = now;
        }
    }
    report(&t);
    return 0;
}

/* ---- probe ---- */

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

/* Wait for `events` on fd until `deadline` (ms); false on timeout. */
static bool wait_fd(int fd, short events, double deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    double left = deadline - now_ms();
    return left > 0 && poll(&p, 1, (int)left + 1) == 1;
}

/* One request on a new connection: true on a 200 within 5 s. */
static bool probe_once(const struct sockaddr_in *a, const char *req, size_t len)
{
    double deadline = now_ms() + 5000;
    int fd = open_conn(a);
    if (fd < 0)
        return false;
    bool ok = wait_fd(fd, POLLOUT, deadline) &&
              send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len;
    char reply[REPLY_MAX];
    size_t got = 0;
    while (ok && got + 1 < sizeof reply && wait_fd(fd, POLLIN, deadline)) {
        ssize_t r = recv(fd, reply + got, sizeof reply - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    reply[got] = '\0';
    close(fd);
    if (ok && strncmp(reply, "HTTP/1.1 200 ", 13) == 0)
        return true;
    /* Why, on stderr: the status line, or how far it got. */
    reply[strcspn(reply, "\r\n")] = '\0';
    fprintf(stderr, "slowload: %s\n", !ok ? "could not send the request"
                                       : got ? reply : "closed without a reply");
    return false;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static int probe(const struct sockaddr_in *a, const char *path, const char *key_file,
                 long count)
{
    char key[KEY_MAX], req[KEY_MAX + 1024];
    if (!read_key(key_file, key, sizeof key)) {
        fprintf(stderr, "slowload: cannot read a key from %s\n", key_file);
        return 2;
    }
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n"
                       "Authorization: Bearer %s\r\nConnection: close\r\n\r\n", path, key);
    memset(key, 0, sizeof key);
    if (len < 0 || (size_t)len >= sizeof req)
        return 2;
    static double ms[PROBE_MAX];
    long ok = 0;
    for (long i = 0; i < count && !stopping; i++) {
        double t0 = now_ms();
        ok += probe_once(a, req, (size_t)len);
        ms[i] = now_ms() - t0;
    }
    memset(req, 0, sizeof req);
    qsort(ms, (size_t)count, sizeof ms[0], by_value);
    printf("ok=%ld failed=%ld p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n", ok, count - ok,
           ms[count / 2], ms[(count * 99) / 100 < count ? (count * 99) / 100 : count - 1],
           ms[count - 1]);
    return ok == count ? 0 : 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: slowload hold 127.0.0.1:PORT N [GAP_MS]\n"
                    "       slowload probe 127.0.0.1:PORT PATH KEYFILE COUNT\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct sockaddr_in a;
    if (argc < 4 || !parse_addr(argv[2], &a))
        return usage();
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    if (strcmp(argv[1], "hold") == 0 && argc <= 5) {
        long n = strtol(argv[3], NULL, 10);
        long gap = argc == 5 ? strtol(argv[4], NULL, 10) : 200;
        if (n <= 0 || n > HOLD_MAX || gap <= 0 || gap > 60000)
            return usage();
        return hold(&a, n, (unsigned)gap);
    }
    if (strcmp(argv[1], "probe") == 0 && argc == 6) {
        long count = strtol(argv[5], NULL, 10);
        if (count <= 0 || count > PROBE_MAX)
            return usage();
        return probe(&a, argv[3], argv[4], count);
    }
    return usage();
}
