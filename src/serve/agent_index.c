/*
 * agent: the policy index, the check against it and the indexer thread. The
 * thread looks at the cache every AGENT_INDEX_POLL_MS (SQLite's data_version:
 * cheap, no I/O), and only when another connection committed does it read the
 * rules' change counter (schema step 9); only when that moved does it build a
 * new policy index, off the request threads, and swap it in. The agent's own
 * writes (token-fetch times) move data_version, never the rules' counter, so
 * they never cause a rebuild.
 */
#include "agent_internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* Swap in `fresh` (NULL: no index) as the one checks read, built from the rules
 * at change counter `counter`, and free the one it replaces. */
static void put_index(agent *ag, policy_index *fresh, long long counter)
{
    pthread_rwlock_wrlock(&ag->index_lock);
    policy_index *old = ag->index;
    ag->index = fresh;
    pthread_rwlock_unlock(&ag->index_lock);
    policy_index_free(old);
    ag->watch_counter = counter;
}

/* Build the index now when it is missing or the rules changed; watch_lock held. */
static error_code index_refresh(agent *ag, error_info *err)
{
    error_code rc = ERROR_OK;
    if (!ag->watch)
        rc = store_open(ag->db_path, STORE_READONLY, &ag->watch, err);
    long long version = 0;
    if (rc == ERROR_OK)
        rc = store_data_version(ag->watch, &version, err);
    if (rc == ERROR_OK && ag->index && version == ag->watch_version)
        return ERROR_OK;
    /* The counter before the rows: a write in between makes the index newer than
     * its counter, which costs one more build, never a stale index kept. */
    store_change_tag tag = {0};
    if (rc == ERROR_OK)
        rc = store_change_tag_get(ag->watch, MODEL_KIND_RULE, &tag, err);
    if (rc == ERROR_OK) {
        if (ag->index)
            atomic_fetch_add(&ag->index_looks, 1);
        ag->watch_version = version;
    }
    if (rc == ERROR_OK && ag->index && tag.counter == ag->watch_counter)
        return ERROR_OK;
    if (rc == ERROR_OK && !ag->index && ag->index_error.code &&
        tag.counter == ag->watch_counter) {
        *err = ag->index_error; /* the same rules would be refused again */
        return err->code;
    }
    policy_index *fresh = NULL;
    if (rc == ERROR_OK)
        rc = policy_index_load(ag->watch, &fresh, err);
    if (rc == ERROR_OK) {
        put_index(ag, fresh, tag.counter);
        ag->index_error.code = ERROR_OK;
        size_t n = atomic_fetch_add(&ag->index_builds, 1) + 1;
        agent_log(ag, "policy index built (%zu since start): %zu bytes", n,
                  policy_index_bytes(fresh));
        return ERROR_OK;
    }
    if (ag->watch && rc == ERROR_IO) {
        store_close(ag->watch); /* reopened on the next look */
        ag->watch = NULL;
    }
    if (rc == ERROR_INVALID) {
        /* A rule the index refuses: no decision rather than one that ignores it
         * (it may be a deny rule) until the rules change again. */
        put_index(ag, NULL, tag.counter);
        if (ag->index_error.code != rc || strcmp(ag->index_error.msg, err->msg) != 0)
            agent_log(ag, "the policy index cannot be built: %s", err->msg);
        ag->index_error = *err;
    }
    return rc;
}

static void *indexer(void *arg)
{
    agent *ag = arg;
    pthread_mutex_lock(&ag->watch_lock);
    while (!ag->index_thread.stop) {
        struct timespec until = thread_deadline(AGENT_INDEX_POLL_MS);
        while (!ag->index_thread.stop &&
               pthread_cond_timedwait(&ag->index_wake, &ag->watch_lock, &until) != ETIMEDOUT)
            ;
        /* Only once a check asked for it: an agent that serves only tokens never
         * builds one. */
        if (!ag->index_thread.stop && (ag->index || ag->index_error.code)) {
            error_info err;
            (void)index_refresh(ag, &err);
        }
    }
    pthread_mutex_unlock(&ag->watch_lock);
    return NULL;
}

error_code agent_index_start(agent *ag, error_info *err)
{
    return thread_start(&ag->index_thread, indexer, ag, "the policy indexer", err);
}

void agent_index_stop(agent *ag)
{
    thread_stop(&ag->index_thread, &ag->watch_lock, &ag->index_wake);
}

/* ---- the check ---- */

error_code agent_policy_check(agent *ag, const char *policy_id, const char *ip,
                              policy_decision *out, error_info *err)
{
    policy_addr addr;
    if (policy_addr_parse(ip, &addr, err) != ERROR_OK)
        return err->code;
    pthread_rwlock_rdlock(&ag->index_lock);
    bool have = ag->index != NULL;
    if (have)
        policy_check_addr(ag->index, policy_id, &addr, out);
    pthread_rwlock_unlock(&ag->index_lock);
    if (have)
        return ERROR_OK;
    /* The first check (or after a failed build): nothing to answer with yet. */
    pthread_mutex_lock(&ag->watch_lock);
    error_code rc = ag->index ? ERROR_OK : index_refresh(ag, err);
    pthread_mutex_unlock(&ag->watch_lock);
    if (rc != ERROR_OK) {
        /* A cached rule the index refuses is the cache's fault, not the caller's:
         * never a 400, and no decision without it (it may be a deny rule). */
        err->code = ERROR_IO;
        return error_prefix(err, "the policy index cannot be built");
    }
    pthread_rwlock_rdlock(&ag->index_lock);
    policy_check_addr(ag->index, policy_id, &addr, out);
    pthread_rwlock_unlock(&ag->index_lock);
    return ERROR_OK;
}
