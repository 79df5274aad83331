/*
 * agent: lifecycle (listeners, key, limits, the first store handle), state and
 * stop. See rampart/agent.h. It starts the parts and calls only down: the log
 * lines are agent_log.c's; the store handles (the pool, each event thread's own)
 * and the replies of a batch agent_batch.c's; the policy index agent_index.c's;
 * the record of token fetches agent_fetches.c's.
 */
#include "agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rampart/model.h"

enum {
    BODY_MAX = 16 * 1024,
    HEADER_MAX = 8 * 1024,
    CONNECTIONS = 1024,    /* per listener, when the fd limit allows */
    CONNECTIONS_MIN = 16,
    PENDING_TCP = 256,     /* TCP connections that have shown no key yet: a slow
                              client's place lasts until this many newer ones came
                              (under a reconnect flood, tens of ms: time enough for
                              an honest client's head, sent at once) */
    FD_RESERVE = 320,      /* for the store handles (3 fds each in WAL: the pool's
                              64, one per event thread), the event threads' epoll
                              sets (2 each), logs, … */
    THREADS_MAX = 8
};

#define DEFAULT_VERSION_HEADER "Service-Version"

static void on_http_log(void *ctx, const http_request *req, const http_response *resp,
                        double ms)
{
    agent_listener *l = ctx;
    atomic_fetch_add(&l->ag->requests, 1);
    if (resp->status >= 500) {
        char path[96];
        agent_log_text(path, sizeof path, req->path);
        agent_log(l->ag, "error path=\"%s\" status=%d %.1fms", path, resp->status, ms);
    }
}

/* ---- starting ---- */

static error_code take_settings(agent *ag, const agent_options *opt, error_info *err)
{
    if (!opt->db_path || !*opt->db_path)
        return error_set(err, ERROR_INVALID, "no cache database given");
    if (opt->nlisten > AGENT_LISTEN_MAX)
        return error_set(err, ERROR_INVALID, "at most %d listeners", AGENT_LISTEN_MAX);
    if (opt->nuids > AGENT_UIDS_MAX)
        return error_set(err, ERROR_INVALID, "at most %d allowed uids", AGENT_UIDS_MAX);
    for (size_t i = 0; i < opt->nuids; i++) {
        if (opt->allow_uids[i] < 0)
            return error_set(err, ERROR_INVALID, "uid %ld is not a user id",
                             opt->allow_uids[i]);
        ag->uids[i] = opt->allow_uids[i];
    }
    ag->nuids = opt->nuids;
    if (ag->nuids == 0)
        ag->uids[ag->nuids++] = (long)geteuid();
    ag->rate = opt->rate_per_s == AGENT_RATE_UNLIMITED ? 0
               : opt->rate_per_s ? opt->rate_per_s
                                 : AGENT_RATE_DEFAULT;
    const char *vh = opt->version_header && *opt->version_header ? opt->version_header
                                                                 : DEFAULT_VERSION_HEADER;
    if (strlen(vh) >= sizeof ag->version_header)
        return error_set(err, ERROR_INVALID, "version header name too long");
    memcpy(ag->version_header, vh, strlen(vh) + 1);
    if (agent_mirror_settings(ag, opt, err) != ERROR_OK)
        return err->code;
    ag->on_log = opt->on_log;
    ag->log_ctx = opt->log_ctx;
    ag->db_path = strdup(opt->db_path);
    if (!ag->db_path)
        return error_set(err, ERROR_NOMEM, "out of memory");
    return ERROR_OK;
}

/* The key, once, for the first TCP listener. */
static error_code load_key(agent *ag, const agent_options *opt, error_info *err)
{
    if (ag->key)
        return ERROR_OK;
    char path[4096];
    const char *p = opt->key_path;
    if (!p || !*p) {
        if (agent_default_key_path(path, sizeof path, err) != ERROR_OK)
            return err->code;
        p = path;
    }
    if (agent_key_ensure(p, err) != ERROR_OK)
        return err->code;
    return agent_key_load(p, &ag->key, &ag->key_len, err);
}

/* Lookups are quick (an indexed read from the WAL): a few event-loop threads, one
 * per core, serve many connections with far fewer context switches than a thread
 * each, and a slow client holds no thread. */
static unsigned event_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 2 ? 2 : n > THREADS_MAX ? THREADS_MAX : (unsigned)n;
}

/* Connections per listener: at most `limit` open, `pending` of them without a
 * key yet. Limits above the process's fd limit would not be limits: accept()
 * would fail first, and the library would stop accepting, leaving newcomers in
 * the kernel's queue. So the soft fd limit is raised to the hard one, and both
 * limits fit in it, the pending ones a quarter of the listener's share. */
typedef struct conn_limits {
    unsigned limit, pending;
} conn_limits;

static conn_limits connection_limits(size_t nlisten)
{
    struct rlimit rl;
    rlim_t share = CONNECTIONS + PENDING_TCP;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                getrlimit(RLIMIT_NOFILE, &rl);
        }
        rlim_t fds = rl.rlim_cur > FD_RESERVE ? rl.rlim_cur - FD_RESERVE : 0;
        rlim_t each = fds / (nlisten ? nlisten : 1);
        share = each < share ? each : share;
    }
    conn_limits c = {.pending = PENDING_TCP};
    if (share / 4 < c.pending)
        c.pending = share / 4 > CONNECTIONS_MIN ? (unsigned)(share / 4) : CONNECTIONS_MIN;
    rlim_t rest = share > c.pending ? share - c.pending : 0;
    c.limit = rest >= CONNECTIONS ? CONNECTIONS : rest > CONNECTIONS_MIN ? (unsigned)rest
                                                                        : CONNECTIONS_MIN;
    return c;
}

/* The head deadline: the option, else the default or the idle timeout when that
 * is shorter (a head that takes longer than a connection may idle is no honest
 * client's). */
static unsigned head_timeout(const agent_options *opt, unsigned idle)
{
    if (opt->head_timeout_s)
        return opt->head_timeout_s;
    return idle < AGENT_HEAD_TIMEOUT_DEFAULT ? idle : AGENT_HEAD_TIMEOUT_DEFAULT;
}

static error_code open_listener(agent *ag, const agent_options *opt, const char *spec,
                                error_info *err)
{
    agent_listener *l = &ag->lis[ag->nlis];
    l->ag = ag;
    if (strncmp(spec, "unix:", 5) == 0 && spec[5] && agent_socket_dir_check(spec + 5, err))
        return err->code;
    unsigned idle = opt->idle_timeout_s ? opt->idle_timeout_s : AGENT_IDLE_TIMEOUT_DEFAULT;
    conn_limits cl = connection_limits(opt->nlisten);
    unsigned threads = event_threads();
    l->workers = calloc(threads, sizeof *l->workers);
    if (!l->workers)
        return error_set(err, ERROR_NOMEM, "out of memory");
    l->nworkers = threads;
    /* pending_limit counts TCP connections only: a unix socket admits at accept. */
    http_config hc = {
        .listen = spec, .ctx = l,
        .routes = opt->mirror_only ? agent_mirror_routes : agent_routes,
        .nroutes = opt->mirror_only ? agent_mirror_nroutes : agent_nroutes,
        .gate = agent_gate, .error = agent_layer_error, .log = on_http_log,
        .body_max = BODY_MAX, .header_max = HEADER_MAX,
        .connection_limit = cl.limit, .pending_limit = cl.pending,
        .head_timeout_s = head_timeout(opt, idle), .timeout_s = idle,
        .threads = threads, .idle = agent_batch_end,
    };
    if (http_server_open(&hc, &l->http, err) != ERROR_OK) {
        agent_workers_free(l);
        return error_prefix(err, "%.200s", spec);
    }
    /* From the socket, not the spec: an inherited one ("fd:N") may be either. */
    l->tcp = !http_server_is_unix(l->http);
    const char *addr = http_server_address(l->http);
    snprintf(l->address, sizeof l->address, "%s%s", l->tcp ? "tcp:" : "unix:", addr);
    if (l->tcp)
        snprintf(l->base, sizeof l->base, "http://%s", addr);
    ag->nlis++; /* closed by agent_stop from here on */
    /* A socket made by the service manager gets the directory check ours get. */
    if (!l->tcp && strncmp(spec, "fd:", 3) == 0 && addr[0] == '/' &&
        agent_socket_dir_check(addr, err) != ERROR_OK)
        return err->code;
    /* After the address was accepted (a refused one makes no key file), before
     * serving (nothing is answered until http_server_start). */
    if (l->tcp && load_key(ag, opt, err) != ERROR_OK)
        return err->code;
    return ERROR_OK;
}

static error_code open_listeners(agent *ag, const agent_options *opt, error_info *err)
{
    char def[4096 + 8];
    if (opt->nlisten == 0) {
        // NOLINTNEXTLINE(bugprone-not-null-terminated-result): the call below ends it
        memcpy(def, "unix:", 5);
        if (agent_default_socket(def + 5, sizeof def - 5, opt->profile, err) != ERROR_OK)
            return err->code;
        return open_listener(ag, opt, def, err);
    }
    for (size_t i = 0; i < opt->nlisten; i++) {
        if (open_listener(ag, opt, opt->listen[i], err) != ERROR_OK)
            return err->code;
    }
    return ERROR_OK;
}

static agent *agent_new(void)
{
    agent *ag = calloc(1, sizeof *ag);
    if (!ag)
        return NULL;
    pthread_mutex_init(&ag->pool_lock, NULL);
    pthread_cond_init(&ag->pool_free, NULL);
    pthread_mutex_init(&ag->watch_lock, NULL);
    pthread_rwlock_init(&ag->index_lock, NULL);
    pthread_mutex_init(&ag->rate_lock, NULL);
    pthread_mutex_init(&ag->fetch_lock, NULL);
    /* The flusher's timed waits on the monotonic clock: a clock step must not
     * hold fetches back (or flush them in a burst). */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ag->fetch_wake, &ca);
    pthread_cond_init(&ag->index_wake, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&ag->index_builds, 0);
    atomic_init(&ag->index_looks, 0);
    atomic_init(&ag->requests, 0);
    atomic_init(&ag->lookups, 0);
    atomic_init(&ag->refused, 0);
    return ag;
}

error_code agent_start(const agent_options *opt, agent **out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *out = NULL;
    agent *ag = agent_new();
    if (!ag)
        return error_set(err, ERROR_NOMEM, "out of memory");
    error_code rc = take_settings(ag, opt, err);
    if (rc == ERROR_OK) {
        /* One handle now: a missing or too new cache is said at start, not per request. */
        store *st = agent_store_take(ag, err);
        rc = st ? ERROR_OK : err->code;
        agent_store_give(ag, st, false);
    }
    if (rc == ERROR_OK)
        rc = agent_fetches_start(ag, err);
    if (rc == ERROR_OK)
        rc = agent_index_start(ag, err);
    if (rc == ERROR_OK)
        rc = open_listeners(ag, opt, err);
    for (size_t i = 0; rc == ERROR_OK && i < ag->nlis; i++)
        rc = http_server_start(ag->lis[i].http, err);
    if (rc != ERROR_OK) {
        agent_stop(ag);
        return rc;
    }
    for (size_t i = 0; i < ag->nlis; i++)
        agent_log(ag, "listening on %s", ag->lis[i].address);
    *out = ag;
    return ERROR_OK;
}

/* ---- state and stop ---- */

void agent_stats_get(agent *ag, agent_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!ag)
        return;
    out->requests = atomic_load(&ag->requests);
    out->lookups = atomic_load(&ag->lookups);
    out->refused = atomic_load(&ag->refused);
    out->index_builds = atomic_load(&ag->index_builds);
    out->index_looks = atomic_load(&ag->index_looks);
    for (size_t i = 0; i < ag->nlis; i++) {
        http_server_stats hs;
        http_server_stats_get(ag->lis[i].http, &hs);
        out->cut_slow += hs.cut_slow;
        out->cut_room += hs.cut_room;
        out->over_limit += hs.over;
        if (i < 2)
            snprintf(out->address[i], sizeof out->address[i], "%s", ag->lis[i].address);
    }
}

const char *agent_address(const agent *ag, size_t i)
{
    return ag && i < ag->nlis ? ag->lis[i].address : NULL;
}

void agent_stop(agent *ag)
{
    if (!ag)
        return;
    for (size_t i = 0; i < ag->nlis; i++) {
        http_server_stop(ag->lis[i].http); /* no hook runs after this */
        agent_workers_free(&ag->lis[i]);
    }
    agent_fetches_stop(ag); /* the last fetches written, now that none come */
    agent_index_stop(ag);
    for (size_t i = 0; i < ag->npool; i++)
        store_close(ag->pool[i]);
    store_close(ag->watch);
    policy_index_free(ag->index);
    if (ag->key) {
        model_wipe(ag->key, ag->key_len);
        free(ag->key);
    }
    free(ag->db_path);
    pthread_mutex_destroy(&ag->pool_lock);
    pthread_cond_destroy(&ag->pool_free);
    pthread_mutex_destroy(&ag->watch_lock);
    pthread_rwlock_destroy(&ag->index_lock);
    pthread_mutex_destroy(&ag->rate_lock);
    pthread_mutex_destroy(&ag->fetch_lock);
    pthread_cond_destroy(&ag->fetch_wake);
    pthread_cond_destroy(&ag->index_wake);
    free(ag);
}
