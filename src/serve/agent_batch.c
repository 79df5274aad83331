/*
 * agent: the read-only store handles (the pool, each event thread's own), and
 * what an event thread keeps for the batch of requests it is serving
 * (http.h: an event thread handles every connection that is ready, then calls
 * the idle hook). Each thread of a listener has its own read-only store handle
 * (no pool lock on the hot path) and remembers the token replies it gave in the
 * current batch: a caller asking again for the same credential within the batch
 * gets the same reply without another read of the cache. The idle hook forgets
 * (and wipes) them.
 *
 * Why per batch: a lookup through SQLite is a read transaction, and in WAL mode
 * each one takes and releases a lock on the -shm file (two fcntl calls, a shared
 * mutex): under load that costs more than the rest of the request. Requests that
 * arrive together are answered from one read. A reply is reused only within its
 * batch, for at most AGENT_BATCH_MAX_MS, and never for the connection whose
 * request read it: a client that changes the cache and then asks (on the same
 * connection, or on a new one, which the library takes in a later batch) sees
 * the change. Tokens live no longer than they did: a batch lasts as long as it
 * takes to send its replies.
 *
 * Why a pool of store handles: requests run on a few event-loop threads (http.h
 * `threads`), and a handle is lent for one request and comes back, so there are
 * never more open than requests running at once; opening SQLite (schema read,
 * statements prepared) per connection would cost more than the lookup itself.
 * Token lookups, the hot path, skip the pool's lock: each thread has its own.
 */
#include "agent_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart/model.h"

static double monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The worker serving `req`, or NULL (a thread per connection, dispatch). */
static agent_worker *worker_of(const agent_listener *l, const http_request *req)
{
    if (req->worker < 0 || (size_t)req->worker >= l->nworkers)
        return NULL;
    return &l->workers[req->worker];
}

static void forget(agent_worker *w)
{
    for (size_t i = 0; i < w->nkept; i++) {
        agent_kept *k = &w->kept[i];
        model_wipe(k->body, k->len);
        free(k->body);
        k->body = NULL;
    }
    w->nkept = 0;
}

void agent_batch_end(void *ctx, int worker)
{
    agent_listener *l = ctx;
    if (worker >= 0 && (size_t)worker < l->nworkers)
        forget(&l->workers[worker]);
}

void agent_workers_free(agent_listener *l)
{
    for (size_t i = 0; i < l->nworkers; i++) {
        forget(&l->workers[i]);
        store_close(l->workers[i].st);
    }
    free(l->workers);
    l->workers = NULL;
    l->nworkers = 0;
}

/* ---- replies kept for the batch ---- */

static agent_kept *find(agent_worker *w, char by, const char *asked)
{
    for (size_t i = 0; i < w->nkept; i++) {
        agent_kept *k = &w->kept[i];
        if (k->by == by && strcmp(k->asked, asked) == 0)
            return k;
    }
    return NULL;
}

bool agent_batch_reply(agent_listener *l, const http_request *req, char by, const char *asked,
                       char canon[MODEL_ID_MAX + 1], http_response *resp)
{
    agent_worker *w = worker_of(l, req);
    agent_kept *k = w && asked ? find(w, by, asked) : NULL;
    /* Not to the connection that read it: its client may have changed the cache
     * since, and ask again before the batch is over. */
    if (!k || k->connection == req->connection || monotonic_ms() - k->at > AGENT_BATCH_MAX_MS)
        return false;
    char *body = malloc(k->len + 1);
    if (!body)
        return false;
    memcpy(body, k->body, k->len + 1);
    agent_reply(resp, 200, body); /* Cache-Control: no-store, as the first one */
    memcpy(canon, k->canon, sizeof k->canon);
    return true;
}

void agent_batch_keep(agent_listener *l, const http_request *req, char by, const char *asked,
                      const char *canon, const http_response *resp)
{
    agent_worker *w = worker_of(l, req);
    if (!w || !asked || !resp->body || strlen(asked) >= sizeof w->kept[0].asked ||
        strlen(canon) >= sizeof w->kept[0].canon)
        return;
    agent_kept *k = find(w, by, asked);
    if (!k && w->nkept == AGENT_BATCH_MAX)
        return; /* a batch asking for that many credentials reads each */
    char *body = malloc(resp->body_len + 1);
    if (!body)
        return;
    memcpy(body, resp->body, resp->body_len + 1);
    if (k) { /* older than AGENT_BATCH_MAX_MS: this one is newer */
        model_wipe(k->body, k->len);
        free(k->body);
    } else {
        k = &w->kept[w->nkept++];
        k->by = by;
        memcpy(k->asked, asked, strlen(asked) + 1);
    }
    memcpy(k->canon, canon, strlen(canon) + 1);
    k->body = body;
    k->len = resp->body_len;
    k->at = monotonic_ms();
    k->connection = req->connection;
}

/* ---- the pool of read-only store handles ---- */

store *agent_store_take(agent *ag, error_info *err)
{
    pthread_mutex_lock(&ag->pool_lock);
    while (ag->npool == 0 && ag->nopen >= AGENT_POOL_MAX)
        pthread_cond_wait(&ag->pool_free, &ag->pool_lock);
    if (ag->npool > 0) {
        store *st = ag->pool[--ag->npool];
        pthread_mutex_unlock(&ag->pool_lock);
        return st;
    }
    ag->nopen++;
    pthread_mutex_unlock(&ag->pool_lock);
    store *st = NULL;
    if (store_open(ag->db_path, STORE_READONLY, &st, err) == ERROR_OK)
        return st;
    pthread_mutex_lock(&ag->pool_lock);
    ag->nopen--;
    pthread_cond_signal(&ag->pool_free);
    pthread_mutex_unlock(&ag->pool_lock);
    return NULL;
}

void agent_store_give(agent *ag, store *st, bool broken)
{
    if (!st)
        return;
    if (broken)
        store_close(st); /* a fresh one is opened when needed */
    pthread_mutex_lock(&ag->pool_lock);
    if (broken)
        ag->nopen--;
    else
        ag->pool[ag->npool++] = st;
    pthread_cond_signal(&ag->pool_free);
    pthread_mutex_unlock(&ag->pool_lock);
}

/* ---- the worker's store handle, and its fetch notes ---- */

store *agent_lookup_store(agent_listener *l, const http_request *req, error_info *err)
{
    agent_worker *w = worker_of(l, req);
    if (!w)
        return agent_store_take(l->ag, err);
    if (!w->st && store_open(l->ag->db_path, STORE_READONLY, &w->st, err) != ERROR_OK)
        w->st = NULL;
    return w->st;
}

void agent_lookup_store_done(agent_listener *l, const http_request *req, store *st,
                             bool broken)
{
    agent_worker *w = worker_of(l, req);
    if (!w) {
        agent_store_give(l->ag, st, broken);
        return;
    }
    if (broken && st == w->st) { /* opened again for the next lookup */
        store_close(w->st);
        w->st = NULL;
    }
}

void agent_batch_note(agent_listener *l, const http_request *req, const char *canon)
{
    agent_worker *w = worker_of(l, req);
    long long now = (long long)time(NULL);
    if (w && w->noted_at == now && strcmp(w->noted, canon) == 0)
        return; /* the same second is noted already: the table keeps seconds */
    agent_fetch_note(l->ag, canon);
    if (w && strlen(canon) < sizeof w->noted) {
        memcpy(w->noted, canon, strlen(canon) + 1);
        w->noted_at = now;
    }
}
