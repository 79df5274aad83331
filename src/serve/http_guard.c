/*
 * http: the connection guard. Who has not yet been admitted (http_request_admit,
 * or a request the gate let through) holds a connection only on terms: its whole
 * request head must have come and passed within head_timeout_s of accept (a
 * deadline, not an idle timer: a byte now and then does not extend it), and at
 * most pending_limit such connections are open at once, the oldest cut to make
 * room for a new one. Refusing the new one instead would let whoever keeps the
 * cap full lock every honest newcomer out; cutting the oldest means a slow client
 * holds its place only until pending_limit newer ones arrived, while an honest
 * client's head (sent at once) is through in far less. Under a flood of
 * newcomers that can still be too short for a worker thread to get to it, so a
 * connection whose whole head already waits in its socket is passed over. A
 * connection beyond connection_limit is kept only to answer its first request
 * with a 503 and is then closed: nothing waits in the kernel's accept queue,
 * where no deadline of ours could reach it.
 *
 * Cutting is shutdown(SHUT_RDWR) on the socket: the library then sees the end of
 * the stream in its own thread and closes the connection as for any client that
 * left. The fd stays valid for as long as the entry exists: the library's CLOSED
 * notification (http_guard_close, under the same lock) comes before it closes
 * the socket, so a cut never hits a number the system gave to another file.
 *
 * No libmicrohttpd here: http.c hands over plain sockets.
 */
#include "http_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "rampart/thread.h"

enum {
    HEAD_PEEK_MAX = 2048, /* an agent's request head is far smaller */
    ROOM_PROBES = 8
};

struct http_guard_conn {
    http_guard_conn *prev, *next; /* in the pending list (oldest first) while listed */
    int fd;
    double deadline;  /* monotonic ms: accept + head_timeout */
    bool listed;      /* pending: not admitted and not cut yet */
    bool admitted;
    bool over;        /* accepted beyond connection_limit: a 503, then closed */
};

struct http_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* CLOCK_MONOTONIC; the watchdog waits on it */
    thread_ctl watchdog;       /* stop read under lock */
    http_guard_conn *head, *tail; /* pending, in accept order = deadline order */
    size_t pending;            /* listed */
    size_t within;             /* open and not over: at most `limit` */
    http_guard_limits lim;
    http_guard_stats stats;
};

static double monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the pending list (lock held) ---- */

static void unlist(http_guard *g, http_guard_conn *c)
{
    if (!c->listed)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        g->tail = c->prev;
    c->prev = c->next = NULL;
    c->listed = false;
    g->pending--;
}

static void enlist(http_guard *g, http_guard_conn *c)
{
    c->prev = g->tail;
    c->next = NULL;
    if (g->tail)
        g->tail->next = c;
    else
        g->head = c;
    g->tail = c;
    c->listed = true;
    g->pending++;
    if (g->head == c) /* the watchdog had nothing to wait for */
        pthread_cond_signal(&g->wake);
}

/* The library notices the end of the stream and closes it as its own. */
static void cut(http_guard *g, http_guard_conn *c, size_t *count)
{
    shutdown(c->fd, SHUT_RDWR);
    unlist(g, c);
    (*count)++;
}

/* A whole request head waiting in the socket, unread: the library reads it next,
 * and its peer is admitted or refused (and closed) at once. An honest client
 * sends its head in one go, right after connecting, so while many newcomers
 * arrive this is how it looks until its worker thread gets to it; a slow client
 * never looks like this. */
static bool head_waiting(int fd)
{
    char buf[HEAD_PEEK_MAX];
    ssize_t n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 && memmem(buf, (size_t)n, "\r\n\r\n", 4) != NULL;
}

/* Make room: the oldest pending connection that is not about to be served (among
 * the oldest few), else the oldest. */
static void cut_for_room(http_guard *g)
{
    http_guard_conn *c = g->head;
    if (!c)
        return;
    for (int i = 0; c && i < ROOM_PROBES; i++, c = c->next) {
        if (!head_waiting(c->fd)) {
            cut(g, c, &g->stats.cut_room);
            return;
        }
    }
    cut(g, g->head, &g->stats.cut_room); /* non-NULL: checked above, not unlisted */
}

/* ---- the watchdog: pending connections past their deadline ---- */

static struct timespec abs_time(double ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1e3);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void *watch(void *arg)
{
    http_guard *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->watchdog.stop) {
        double now = monotonic_ms();
        while (g->head && g->head->deadline <= now)
            cut(g, g->head, &g->stats.cut_slow);
        if (!g->head) {
            pthread_cond_wait(&g->wake, &g->lock);
            continue;
        }
        struct timespec until = abs_time(g->head->deadline);
        pthread_cond_timedwait(&g->wake, &g->lock, &until);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* ---- the contract (http_internal.h) ---- */

error_code http_guard_new(const http_guard_limits *lim, http_guard **out, error_info *err)
{
    *out = NULL;
    http_guard *g = calloc(1, sizeof *g);
    if (!g)
        return error_set(err, ERROR_NOMEM, "out of memory");
    g->lim = *lim;
    if (g->lim.pending_limit == 0)
        g->lim.pending_limit = 1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&g->lock, NULL);
    error_code rc = thread_start(&g->watchdog, watch, g, "the connection watchdog", err);
    if (rc != ERROR_OK) {
        http_guard_free(g);
        return rc;
    }
    *out = g;
    return ERROR_OK;
}

http_guard_conn *http_guard_open(http_guard *g, int fd)
{
    http_guard_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->deadline = monotonic_ms() + 1e3 * g->lim.head_timeout_s;
    pthread_mutex_lock(&g->lock);
    if (g->within >= g->lim.connection_limit) {
        c->over = true;
        g->stats.over++;
    } else {
        g->within++;
    }
    if (g->lim.admit_at_once && !c->over) {
        c->admitted = true;
    } else {
        enlist(g, c);
        while (g->pending > g->lim.pending_limit && g->head)
            cut_for_room(g);
    }
    pthread_mutex_unlock(&g->lock);
    return c;
}

bool http_guard_over(const http_guard_conn *c)
{
    return c && c->over; /* set before the connection's first byte is read */
}

void http_guard_admit(http_guard *g, http_guard_conn *c)
{
    /* Every request of a kept-alive connection comes here: no lock once admitted.
     * Only the connection's own thread writes `admitted` (here, and at open). */
    if (!c || c->over || c->admitted)
        return;
    pthread_mutex_lock(&g->lock);
    c->admitted = true;
    unlist(g, c);
    pthread_mutex_unlock(&g->lock);
}

void http_guard_close(http_guard *g, http_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    unlist(g, c);
    if (!c->over)
        g->within--;
    pthread_mutex_unlock(&g->lock);
    free(c);
}

void http_guard_stats_get(http_guard *g, http_guard_stats *out)
{
    pthread_mutex_lock(&g->lock);
    *out = g->stats;
    pthread_mutex_unlock(&g->lock);
}

void http_guard_free(http_guard *g)
{
    if (!g)
        return;
    thread_stop(&g->watchdog, &g->lock, &g->wake);
    /* The library closed every connection before (each CLOSED freed its entry);
     * whatever is left was never notified closed. */
    for (http_guard_conn *c = g->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    g->head = g->tail = NULL;
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g);
}
