/*
 * engine: pulling complete listings. Each page goes into the store's staging
 * tables as it arrives (memory stays bounded by one page); only when both
 * listings are complete are they merged into the cache, in one transaction.
 * Any error before that leaves the cache as it was: absence is evidence only in
 * a complete, successful listing.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the creation marker -------------------------------------------------- */

bool engine_marked_metadata(const char *user, const char *local_id, char *out,
                            size_t size)
{
    int n = snprintf(out, size, "%s%s" SYNC_MARKER_KEY "%s", user, user[0] ? "\n" : "",
                     local_id);
    return n >= 0 && (size_t)n < size;
}

void engine_strip_marker(char *metadata, char *marker)
{
    marker[0] = '\0';
    char *nl = strrchr(metadata, '\n');
    char *line = nl ? nl + 1 : metadata;
    size_t key = strlen(SYNC_MARKER_KEY);
    if (strncmp(line, SYNC_MARKER_KEY, key) != 0)
        return;
    const char *id = line + key;
    size_t len = strlen(id);
    if (len == 0 || len > MODEL_ID_MAX || strchr(id, '\r'))
        return;
    memcpy(marker, id, len + 1);
    *(nl ? nl : metadata) = '\0';
}

/* ---- listing one collection ----------------------------------------------- */

typedef struct list_job {
    bool is_rule;
    const char *url;          /* NULL: the first page */
    codec_rule_page rules;
    codec_cred_page creds;
} list_job;

static sync_outcome send_list(engine *e, void *arg, sync_result *res)
{
    list_job *l = arg;
    if (l->is_rule) {
        codec_rule_page_free(&l->rules);
        return e->ops->rule_list_page(e->api, l->url, &l->rules, res);
    }
    codec_cred_page_free(&l->creds);
    return e->ops->cred_list_page(e->api, l->url, &l->creds, res);
}

/* Id of item i of the page in `l` ("" when the item has none). */
static const char *item_id(const list_job *l, size_t i)
{
    return l->is_rule ? l->rules.items[i].id : l->creds.items[i].id;
}

static error_code stage_creds(engine *e, codec_cred_page *p, error_info *err)
{
    char (*markers)[MODEL_ID_MAX + 1] = calloc(p->count, sizeof *markers);
    const char **ptrs = calloc(p->count, sizeof *ptrs);
    error_code rc = ERROR_OK;
    if (!markers || !ptrs) {
        rc = error_set(err, ERROR_NOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < p->count; i++) {
            engine_strip_marker(p->items[i].metadata, markers[i]);
            ptrs[i] = markers[i];
        }
        rc = store_pull_stage_creds(e->st, p->items, ptrs, p->count, err);
    }
    free(markers);
    free(ptrs);
    return rc;
}

/* Stage the page in `l`. */
static error_code stage_page(engine *e, list_job *l, error_info *err)
{
    if (l->is_rule)
        return store_pull_stage_rules(e->st, l->rules.items, l->rules.count, err);
    return stage_creds(e, &l->creds, err);
}

static const char *next_uri(const list_job *l)
{
    return l->is_rule ? l->rules.next_page_uri : l->creds.next_page_uri;
}

static size_t page_size(const list_job *l)
{
    return l->is_rule ? l->rules.count : l->creds.count;
}

/* One page: fetched (with retries), staged. false: the listing is incomplete. */
static bool list_page(engine *e, list_job *l, size_t *total)
{
    const char *plural = l->is_rule ? "rules" : "credentials";
    sync_result res;
    sync_outcome out = engine_send_idempotent(e, send_list, l, &res);
    if (out != SYNC_OK) {
        engine_fail(e, ENGINE_PULL_FAILED, "listing %s failed: %s", plural, res.message);
        return false;
    }
    size_t listed = page_size(l);
    /* An item without an id cannot be matched: the listing is not one to trust
     * with absence, so the pull stops here rather than skipping it. */
    for (size_t i = 0; i < listed; i++) {
        if (!item_id(l, i)[0]) {
            engine_fail(e, ENGINE_PULL_FAILED, "listing %s: item without an id", plural);
            return false;
        }
    }
    error_info err;
    if (stage_page(e, l, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    *total += listed;
    engine_step(e, listed);
    return true;
}

/*
 * Pages come newest first, so each page's last id is older than the one before.
 * A page that does not move back (a server handing out pages in a loop) would
 * make the pull endless. Ids of different lengths (older ids can be shorter) do
 * not compare as text, so only equal lengths are checked.
 */
static bool moves_back(const char *prev_last, const char *last)
{
    if (!prev_last[0] || strlen(prev_last) != strlen(last))
        return true;
    return strcmp(last, prev_last) < 0;
}

/* Follow next_page_uri verbatim until it is null or a page is empty. */
static bool list_all(engine *e, bool is_rule, size_t *total)
{
    list_job l = {.is_rule = is_rule};
    char url[MODEL_URI_MAX + 1] = "";
    char prev_last[MODEL_ID_MAX + 1] = "";
    bool ok = true;
    *total = 0;
    for (;;) {
        l.url = url[0] ? url : NULL;
        if (!(ok = list_page(e, &l, total)) || page_size(&l) == 0 || !next_uri(&l)[0])
            break;
        const char *last = item_id(&l, page_size(&l) - 1);
        if (!moves_back(prev_last, last) || strcmp(next_uri(&l), url) == 0) {
            engine_fail(e, ENGINE_PULL_FAILED, "listing %s does not advance: the server "
                        "handed out a page it had already sent", is_rule ? "rules" : "credentials");
            ok = false;
            break;
        }
        memcpy(url, next_uri(&l), sizeof url);
        memcpy(prev_last, last, sizeof prev_last);
    }
    codec_rule_page_free(&l.rules);
    codec_cred_page_free(&l.creds);
    return ok;
}

/* ---- the pull ------------------------------------------------------------- */

static void log_merge(engine *e, const store_pull_stats *r, const store_pull_stats *c)
{
    engine_log(e, SYNC_LOG_INFO, "pulled %zu rules and %zu credentials", r->pulled,
               c->pulled);
    if (r->added + c->added)
        engine_log(e, SYNC_LOG_INFO, "%zu added remotely", r->added + c->added);
    if (r->remote_deleted + c->remote_deleted)
        engine_log(e, SYNC_LOG_WARN, "%zu deleted remotely: kept for review "
                   "(rampart plan shows them with ~)", r->remote_deleted + c->remote_deleted);
    if (r->adopted)
        engine_log(e, SYNC_LOG_INFO, "%zu rules found remotely by their policy, cidr "
                   "and action: synced", r->adopted);
    if (r->conflicts)
        engine_log(e, SYNC_LOG_ERROR, "%zu rules clash with a remote rule of the other "
                   "action: failed (rampart plan shows why)", r->conflicts);
    if (c->orphaned)
        engine_log(e, SYNC_LOG_WARN, "%zu credentials were created remotely but their "
                   "tokens were lost: they are deleted there and created again",
                   c->orphaned);
    if (c->strays)
        engine_log(e, SYNC_LOG_WARN, "%zu extra remote copies of our credentials: "
                   "deleted by the next push", c->strays);
    if (r->requeued + c->requeued)
        engine_log(e, SYNC_LOG_INFO, "%zu creates not found remotely: queued again",
                   r->requeued + c->requeued);
}

bool engine_pull(engine *e)
{
    error_info err;
    engine_phase(e, SYNC_PHASE_PULL, 0);
    if (store_pull_begin(e->st, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    size_t rules = 0, creds = 0;
    if (!list_all(e, true, &rules) || !list_all(e, false, &creds))
        return false;
    engine_phase(e, SYNC_PHASE_RECONCILE, 1);
    store_pull_stats r, c;
    if (store_pull_merge(e->st, &r, &c, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    sync_report *rep = e->report;
    rep->pulled_rules = r.pulled;
    rep->pulled_creds = c.pulled;
    rep->remote_added += r.added + c.added;
    rep->remote_deleted += r.remote_deleted + c.remote_deleted;
    rep->adopted += r.adopted;
    e->pulled = true;
    e->requeued = r.requeued + c.requeued + c.orphaned + c.strays;
    log_merge(e, &r, &c);
    engine_step(e, 1);
    return true;
}
