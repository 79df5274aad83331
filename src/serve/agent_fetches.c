/*
 * agent: when each credential's token was last handed out, kept in the cache
 * (store.h, store_fetch_record_batch) so the console, another process, can say
 * before a delete which credentials local agents use, also after a restart.
 *
 * Why batches off the request path: lookups read through read-only handles and
 * must stay as fast as a static file server; a write per lookup would take the
 * cache's write lock and an fsync (synchronous=FULL) per token handed out. So a
 * lookup only notes the id and time in memory, and a thread writes them all in
 * one transaction every AGENT_FETCH_FLUSH_S seconds through a writable handle of
 * its own; a cache another writer holds makes it keep them for the next try.
 * Only ids and times are kept, never a token.
 */
#include "agent_internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* Note `cred_id` at `at` (the later time wins). Caller holds fetch_lock. */
static void note_locked(agent *ag, const char *cred_id, long long at)
{
    for (size_t i = 0; i < ag->nfetches; i++) {
        if (strcmp(ag->fetches[i].cred_id, cred_id) == 0) {
            if (at > ag->fetches[i].at)
                ag->fetches[i].at = at;
            return;
        }
    }
    size_t len = strlen(cred_id);
    if (ag->nfetches == AGENT_FETCH_MAX || len >= sizeof ag->fetches[0].cred_id) {
        ag->fetches_dropped++;
        return;
    }
    store_fetch *f = &ag->fetches[ag->nfetches++];
    memcpy(f->cred_id, cred_id, len + 1);
    f->at = at;
    if (ag->nfetches == AGENT_FETCH_MAX)
        pthread_cond_signal(&ag->fetch_wake); /* full: write now, not at the next flush */
}

void agent_fetch_note(agent *ag, const char *cred_id)
{
    long long now = (long long)time(NULL);
    pthread_mutex_lock(&ag->fetch_lock);
    note_locked(ag, cred_id, now);
    pthread_mutex_unlock(&ag->fetch_lock);
}

/* Write the noted fetches. On failure they are noted again (merged with those
 * that came meanwhile) for the next try, and the handle is reopened then; the
 * `last` one (at stop) has no next try. */
static void flush(agent *ag, bool last)
{
    pthread_mutex_lock(&ag->fetch_lock);
    size_t n = ag->nfetches, dropped = ag->fetches_dropped;
    memcpy(ag->flushing, ag->fetches, n * sizeof ag->fetches[0]);
    ag->nfetches = 0;
    ag->fetches_dropped = 0;
    pthread_mutex_unlock(&ag->fetch_lock);
    if (dropped)
        agent_log(ag, "fetch times of %zu lookups not recorded: more than %d credentials "
                  "fetched between two writes", dropped, AGENT_FETCH_MAX);
    if (n == 0)
        return;
    error_info e = {0};
    error_code rc = ag->writer ? ERROR_OK : store_open(ag->db_path, 0, &ag->writer, &e);
    if (rc == ERROR_OK)
        rc = store_fetch_record_batch(ag->writer, ag->flushing, n, &e);
    if (rc == ERROR_OK)
        return;
    store_close(ag->writer);
    ag->writer = NULL;
    pthread_mutex_lock(&ag->fetch_lock);
    for (size_t i = 0; i < n; i++)
        note_locked(ag, ag->flushing[i].cred_id, ag->flushing[i].at);
    pthread_mutex_unlock(&ag->fetch_lock);
    if (last)
        agent_log(ag, "fetch times of %zu credentials not written to the cache (the agent "
                  "stops): %s", n, e.msg);
    else
        agent_log(ag, "fetch times of %zu credentials not written to the cache yet (next "
                  "try in %d s): %s", n, AGENT_FETCH_FLUSH_S, e.msg);
}

static void *flusher(void *arg)
{
    agent *ag = arg;
    pthread_mutex_lock(&ag->fetch_lock);
    while (!ag->fetch_thread.stop) {
        struct timespec until = thread_deadline(AGENT_FETCH_FLUSH_S * 1000L);
        while (!ag->fetch_thread.stop && ag->nfetches < AGENT_FETCH_MAX &&
               pthread_cond_timedwait(&ag->fetch_wake, &ag->fetch_lock, &until) != ETIMEDOUT)
            ;
        if (ag->fetch_thread.stop)
            break;
        pthread_mutex_unlock(&ag->fetch_lock);
        flush(ag, false);
        pthread_mutex_lock(&ag->fetch_lock);
    }
    pthread_mutex_unlock(&ag->fetch_lock);
    return NULL;
}

error_code agent_fetches_start(agent *ag, error_info *err)
{
    return thread_start(&ag->fetch_thread, flusher, ag, "the fetch recorder", err);
}

void agent_fetches_stop(agent *ag)
{
    thread_stop(&ag->fetch_thread, &ag->fetch_lock, &ag->fetch_wake);
    flush(ag, true); /* after the listeners stopped: nothing is noted any more */
    store_close(ag->writer);
    ag->writer = NULL;
}
