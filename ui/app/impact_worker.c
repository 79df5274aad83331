/*
 * The pending view's impact (setting impact_log): a thread of its own reads the
 * logs once (rampart/logscan.h) and, each time the loop asks (the queue may have
 * changed), decides their addresses against every policy a queued change
 * touches (impact_queue_totals) on a read-only handle of its own; the summary
 * comes back as an event, so the drawing thread never waits for a log.
 */
#include "app_internal.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rampart/impact.h"
#include "rampart/logscan.h"
#include "rampart/words.h"

struct ui_impact {
    ui_app *app;
    char *db_path;
    words logs;
    logscan *scan;  /* the logs, read once (the worker's) */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool wanted, stop;
};

static bool keep_going(void *ctx)
{
    ui_impact *w = ctx;
    pthread_mutex_lock(&w->mu);
    bool stop = w->stop;
    pthread_mutex_unlock(&w->mu);
    return !stop;
}

static void post(ui_impact *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void post(ui_impact *w, const char *fmt, ...)
{
    ui_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = UI_EVENT_IMPACT;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev.line, sizeof ev.line, fmt, ap);
    va_end(ap);
    ui_app_post(w->app, &ev);
}

/* Files only: "-" is the console's keyboard, and a FIFO or a device may block
 * open() or read() for good, past keep_going, so the console could not quit. */
static error_code regular_file(const char *path, error_info *e)
{
    struct stat sb;
    bool stdin_asked = strcmp(path, "-") == 0;
    if (!stdin_asked && stat(path, &sb) != 0)
        return ERROR_OK; /* logscan_file names the error */
    if (stdin_asked || !S_ISREG(sb.st_mode))
        return error_set(e, ERROR_INVALID, "impact_log: %s is not a regular file (the "
                         "console reads log files only)", path);
    return ERROR_OK;
}

static error_code read_logs(ui_impact *w, error_info *e)
{
    logscan_opts o = {.keep_going = keep_going, .keep_going_ctx = w};
    error_code rc = logscan_new(&o, &w->scan, e);
    for (size_t i = 0; rc == ERROR_OK && i < w->logs.argc; i++) {
        rc = regular_file(w->logs.argv[i], e);
        if (rc == ERROR_OK)
            rc = logscan_file(w->scan, w->logs.argv[i], e);
    }
    if (rc != ERROR_OK) {
        logscan_free(w->scan);
        w->scan = NULL;
    }
    return rc;
}

/* One summary: the logs (read the first time), the queue as it is now. */
static void compute(ui_impact *w)
{
    error_info e = {0};
    if (!w->scan && read_logs(w, &e) != ERROR_OK) {
        if (e.code != ERROR_STATE) /* stopped: the console is leaving */
            post(w, "impact: %s", e.msg);
        return;
    }
    size_t n;
    const logscan_addr *addrs = logscan_addrs(w->scan, &n);
    store *st = NULL;
    impact_totals t;
    if (store_open(w->db_path, STORE_READONLY, &st, &e) != ERROR_OK ||
        impact_queue_totals(st, addrs, n, &t, &e) != ERROR_OK) {
        store_close(st);
        post(w, "impact: %s", e.msg);
        return;
    }
    store_close(st);
    if (!n)
        post(w, "impact: no address in the logs");
    else if (!t.denied_addresses && !t.allowed_addresses)
        post(w, "impact: no client of the logs flips");
    else if (!t.allowed_addresses)
        post(w, "impact: %zu denied (%llu req)", t.denied_addresses,
             (unsigned long long)t.denied_requests);
    else if (!t.denied_addresses)
        post(w, "impact: %zu allowed (%llu req)", t.allowed_addresses,
             (unsigned long long)t.allowed_requests);
    else
        post(w, "impact: %zu denied (%llu req), %zu allowed (%llu req)", t.denied_addresses,
             (unsigned long long)t.denied_requests, t.allowed_addresses,
             (unsigned long long)t.allowed_requests);
}

static void *worker(void *arg)
{
    ui_impact *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (!w->wanted && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        bool stop = w->stop;
        w->wanted = false;
        pthread_mutex_unlock(&w->mu);
        if (stop)
            return NULL;
        compute(w);
    }
}

static void impact_free(ui_impact *w)
{
    logscan_free(w->scan);
    words_free(&w->logs);
    free(w->db_path);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

ui_impact *ui_impact_start(ui_app *app, const char *db_path, const char *logs)
{
    if (!logs || !logs[0] || !db_path)
        return NULL;
    ui_impact *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->app = app;
    error_info e = {0};
    if (!(w->db_path = strdup(db_path)) || words_split(logs, &w->logs, &e) != ERROR_OK ||
        w->logs.argc == 0) {
        snprintf(app->impact_text, sizeof app->impact_text, "impact: impact_log: %.280s",
                 e.msg[0] ? e.msg : "no log named");
        impact_free(w);
        return NULL;
    }
    w->wanted = true; /* the first summary */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay the loop's */
    int rc = pthread_create(&w->thread, NULL, worker, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        impact_free(w);
        return NULL;
    }
    snprintf(app->impact_text, sizeof app->impact_text, "impact: reading the logs");
    return w;
}

/* Raise `flag` (w->wanted or w->stop) under the lock and wake the thread. */
static void wake(ui_impact *w, bool *flag)
{
    pthread_mutex_lock(&w->mu);
    *flag = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void ui_impact_request(ui_impact *w)
{
    if (w)
        wake(w, &w->wanted);
}

void ui_impact_stop(ui_impact *w)
{
    if (!w)
        return;
    wake(w, &w->stop);
    pthread_join(w->thread, NULL);
    impact_free(w);
}
