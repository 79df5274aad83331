/*
 * engine: the pacing schedule kept in the cache between runs (store meta
 * "sync_pace"), so that back-to-back syncs of one cache, from one process or
 * several (the sync lock lets one run at a time), keep one schedule: the next run
 * starts where the last one's spacing and slowdown left off, and its ring holds
 * the last run's completion times of the window, so no rolling window sees more
 * than the share across the two.
 *
 * The record: "v1 <newest> <next_at> <slow> <deltas>", times on the engine's
 * clock (CLOCK_MONOTONIC for the real one: one clock for every process of a
 * boot). <deltas> are the gaps from each completion to the one before it,
 * newest first, in centiseconds as two base-36 digits each, rounded down and
 * clamped at 1295: a gap read back is never longer than it was, so the times
 * read back are never earlier (waits are only ever longer). As many as fit in
 * STORE_META_VALUE_MAX bytes.
 */
#include "engine_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PACE_KEY "sync_pace"

enum { DELTA_MAX_CS = 36 * 36 - 1, RECORD_MAX_TIMES = STORE_META_VALUE_MAX / 2 };

static const char DIGITS[] = "0123456789abcdefghijklmnopqrstuvwxyz";

static double ring_at(const engine_pace *p, size_t i_from_newest)
{
    return p->ring[(p->head + p->count - 1 - i_from_newest) % p->cap];
}

void engine_pace_save(engine *e)
{
    const engine_pace *p = &e->pace;
    if (!p->paced || p->count == 0)
        return;
    char buf[STORE_META_VALUE_MAX + 1];
    double newest = ring_at(p, 0);
    int n = snprintf(buf, sizeof buf, "v1 %.3f %.3f %.4f ", newest, p->next_at, p->slow);
    if (n < 0 || (size_t)n >= sizeof buf)
        return;
    size_t len = (size_t)n;
    double prev = newest; /* the time as it will be read back */
    for (size_t i = 1; i < p->count && len + 2 <= STORE_META_VALUE_MAX; i++) {
        double gap = floor((prev - ring_at(p, i)) * 100.0);
        long cs = gap < 0 ? 0 : gap > DELTA_MAX_CS ? DELTA_MAX_CS : (long)gap;
        buf[len++] = DIGITS[cs / 36];
        buf[len++] = DIGITS[cs % 36];
        prev -= (double)cs / 100.0;
    }
    buf[len] = '\0';
    error_info err;
    if (store_meta_set(e->st, PACE_KEY, buf, &err))
        engine_log(e, SYNC_LOG_WARN, "the pacing schedule was not kept for the next sync: %s",
                   err.msg);
}

static int digit(char c)
{
    const char *at = c ? strchr(DIGITS, c) : NULL;
    return at ? (int)(at - DIGITS) : -1;
}

/* The completion times of a record, newest first, into `t`; how many. */
static size_t read_times(double newest, const char *deltas, double *t, size_t max)
{
    size_t n = 0;
    t[n++] = newest;
    for (const char *d = deltas; n < max && digit(d[0]) >= 0 && digit(d[1]) >= 0; d += 2) {
        t[n] = t[n - 1] - (double)(digit(d[0]) * 36 + digit(d[1])) / 100.0;
        n++;
    }
    return n;
}

void engine_pace_load(engine *e)
{
    engine_pace *p = &e->pace;
    char buf[STORE_META_VALUE_MAX + 1];
    error_info err;
    if (!p->paced || store_meta_get(e->st, PACE_KEY, buf, sizeof buf, &err) != ERROR_OK)
        return;
    double newest, next_at, slow;
    int off = 0;
    if (sscanf(buf, "v1 %lf %lf %lf %n", &newest, &next_at, &slow, &off) != 3 || off <= 0)
        return;
    double now = engine_now(e);
    /* From another clock (a reboot: monotonic time starts again), or a window old:
     * nothing to take over. */
    if (!isfinite(newest) || !isfinite(next_at) || !isfinite(slow) || newest > now + 1.0 ||
        now - newest >= p->window_s)
        return;
    double times[RECORD_MAX_TIMES];
    size_t n = read_times(newest, buf + off, times, RECORD_MAX_TIMES);
    if (n > p->cap)
        n = p->cap;
    for (size_t i = n; i-- > 0;) /* oldest first */
        engine_pace_count(e, times[i]);
    p->slow = slow < 1.0 ? 1.0 : slow > 8.0 ? 8.0 : slow;
    /* Never further away than one spacing after the last request at this pace. */
    double latest = newest + engine_pace_interval(e);
    p->next_at = next_at > latest ? latest : next_at;
}
