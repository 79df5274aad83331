/*
 * engine: pulling complete listings. Each page goes into the store's staging
 * tables as it arrives (memory stays bounded by one page); only when every
 * kind's listing is complete are they merged into the cache, in one transaction.
 * Any error before that leaves the cache as it was: absence is evidence only in
 * a complete, successful listing. An object the store refuses costs only itself.
 */
#include "engine_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- staging one page ----------------------------------------------------- */

/* The store's refusal of one listed object: a warning naming it and why. */
static void on_refused(void *ctx, model_kind kind, const char *id, const error_info *why)
{
    engine *e = ctx;
    engine_log(e, SYNC_LOG_WARN, "remote %s %s refused: %s", kind_get(kind)->noun,
               id[0] ? id : "(no id)", why->msg);
}

/* Items the codec could not read at all: named, counted, and staged as refused
 * by their id, so a cached copy is kept and the merge takes nothing for absent. */
static error_code stage_unreadable(engine *e, const codec_page *page, error_info *err)
{
    for (size_t i = 0; i < page->refused_count; i++) {
        const codec_refusal *r = &page->refused[i];
        error_info why = {.code = ERROR_INVALID};
        memcpy(why.msg, r->msg, sizeof why.msg);
        on_refused(e, page->kind, r->id, &why);
        e->refused++;
        if (store_pull_unreadable(e->st, page->kind, r->id, err))
            return err->code;
    }
    return ERROR_OK;
}

static error_code stage_page(engine *e, codec_page *page, error_info *err)
{
    engine_markers m;
    size_t refused = 0;
    if (stage_unreadable(e, page, err))
        return err->code;
    error_code rc = engine_markers_take(page, &m, err);
    if (rc == ERROR_OK)
        rc = store_pull_stage(e->st, page->kind, page->items, m.ptrs,
                              (const char *const *)m.raw, page->count, on_refused, e,
                              &refused, err);
    engine_markers_free(&m);
    e->refused += refused;
    return rc;
}

/* ---- listing one collection ----------------------------------------------- */

typedef struct list_job {
    engine_target t;          /* the kind listed; no row */
    const char *url;          /* NULL: the first page */
    codec_page page;
} list_job;

static sync_outcome send_list(engine *e, void *arg, sync_result *res)
{
    list_job *l = arg;
    codec_page_free(&l->page);
    return e->ops->list_page(e->api, l->t.kind, l->url, &l->page, res);
}

/* An item without an id cannot be matched: the listing is not one to trust with
 * absence, so the pull stops rather than skipping it. */
static bool every_item_has_an_id(const codec_page *page)
{
    for (size_t i = 0; i < page->count; i++) {
        if (!model_object_id(&page->items[i])[0])
            return false;
    }
    return true;
}

/* One page fetched (with retries) into l->page. false: the listing is incomplete. */
static bool fetch_page(engine *e, list_job *l)
{
    const char *plural = kind_get(l->t.kind)->plural;
    sync_result res;
    if (engine_send_idempotent(e, &l->t, send_list, l, &res) != SYNC_OK) {
        engine_fail_at(e, ENGINE_PULL_FAILED, &l->t, &res, "listing %s failed: %s", plural,
                       res.message);
        return false;
    }
    if (!every_item_has_an_id(&l->page)) {
        engine_fail_at(e, ENGINE_PULL_FAILED, &l->t, NULL, "listing %s: item without an id",
                       plural);
        return false;
    }
    return true;
}

/* The fetched page into staging. false: the store failed (the run stops). */
static bool stage_listed(engine *e, list_job *l)
{
    error_info err;
    if (stage_page(e, &l->page, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    engine_step(e, l->page.count);
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

/* The page after l->page may be asked for (the listing goes on): false, with the
 * run stopped, when it would hand out a page already sent. */
static bool advances(engine *e, const list_job *l, const char *url, const char *prev_last)
{
    const char *last = model_object_id(&l->page.items[l->page.count - 1]);
    if (moves_back(prev_last, last) && strcmp(l->page.next_page_uri, url) != 0)
        return true;
    engine_fail_at(e, ENGINE_PULL_FAILED, &l->t, NULL, "listing %s does not advance: the "
                   "server handed out a page it had already sent", kind_get(l->t.kind)->plural);
    return false;
}

/*
 * While a page is staged the next one is on the wire: its request goes out
 * before the staging (list_ahead), when a request may start at once. Paced, the
 * staging fits in the wait for the next slot anyway, and the schedule alone
 * decides when a request starts.
 */
static void ask_ahead(engine *e, model_kind kind, const char *url)
{
    if (e->ops->list_ahead && !e->pace.paced && e->stop == ENGINE_GO &&
        e->resume_at <= engine_now(e))
        e->ops->list_ahead(e->api, kind, url);
}

/* Follow next_page_uri verbatim until it is null or a page is empty. */
/* A listing longer than the cap is not the account's (a remote or hub serving
 * pages forever): the pull stops, naming the setting. */
static bool within_cap(engine *e, const list_job *l, size_t *listed)
{
    *listed += l->page.count;
    if (*listed <= e->opt.listing_max)
        return true;
    engine_fail_at(e, ENGINE_PULL_FAILED, &l->t, NULL, "listing %s holds more than %zu "
                   "objects (the listing_max setting): stopped, nothing marked deleted; "
                   "raise it if the account is that large", kind_get(l->t.kind)->plural,
                   e->opt.listing_max);
    return false;
}

static bool list_all(engine *e, model_kind kind)
{
    list_job l = {.t = {kind, NULL}};
    char url[MODEL_URI_MAX + 1] = "";
    char prev_last[MODEL_ID_MAX + 1] = "";
    size_t listed = 0;
    bool ok = true;
    for (;;) {
        l.url = url[0] ? url : NULL;
        if (!(ok = fetch_page(e, &l)) || !(ok = within_cap(e, &l, &listed)))
            break;
        bool last = l.page.count == 0 || !l.page.next_page_uri[0];
        if (!last && !(ok = advances(e, &l, url, prev_last)))
            break;
        if (!last)
            ask_ahead(e, kind, l.page.next_page_uri);
        if (!(ok = stage_listed(e, &l)) || last)
            break;
        memcpy(url, l.page.next_page_uri, sizeof url);
        memcpy(prev_last, model_object_id(&l.page.items[l.page.count - 1]), sizeof prev_last);
    }
    codec_page_free(&l.page);
    return ok;
}

/* ---- the pull ------------------------------------------------------------- */

/* One line of the merge's report, said when its count is not 0: `before`, the
 * count, a space, `after`. The count adds up the kinds in `of`. */
enum { OF_RULES = 1, OF_CREDS = 2, OF_BOTH = 3 };
enum { ANY_ROLE, FOLLOWER, NOT_FOLLOWER };
typedef struct merge_line {
    size_t offset; /* of a size_t in store_pull_stats */
    unsigned of;
    unsigned role; /* whose report says it: any, a follower's, another's */
    sync_log_level level;
    const char *before, *after;
} merge_line;

#define STAT(field) offsetof(store_pull_stats, field)
static const merge_line merge_lines[] = {
    {STAT(added), OF_BOTH, ANY_ROLE, SYNC_LOG_INFO, "", "added remotely"},
    {STAT(remote_deleted), OF_BOTH, FOLLOWER, SYNC_LOG_INFO, "", "deleted upstream: removed"},
    {STAT(remote_deleted), OF_BOTH, NOT_FOLLOWER, SYNC_LOG_WARN, "",
     "deleted remotely: kept for review (rampart plan shows them with ~)"},
    {STAT(adopted), OF_RULES, ANY_ROLE, SYNC_LOG_INFO, "",
     "rules found remotely by their policy, cidr and action: synced"},
    {STAT(conflicts), OF_BOTH, ANY_ROLE, SYNC_LOG_ERROR, "",
     "rules clash with a remote rule holding their cidr: conflicts to resolve (rampart plan "
     "shows them with !)"},
    {STAT(edit_conflicts), OF_BOTH, ANY_ROLE, SYNC_LOG_ERROR, "",
     "edited rows were changed or deleted remotely: conflicts to resolve (rampart plan shows "
     "them with !)"},
    {STAT(orphaned), OF_CREDS, ANY_ROLE, SYNC_LOG_WARN, "",
     "credentials were created remotely but their tokens were lost: they are deleted there "
     "and created again"},
    {STAT(strays), OF_CREDS, ANY_ROLE, SYNC_LOG_WARN, "",
     "extra remote copies of our credentials: deleted by the next push"},
    {STAT(twice), OF_BOTH, ANY_ROLE, SYNC_LOG_WARN, "the remote's listing held ",
     "ids twice (a page shifted while it was read?): each is cached once, as last listed"},
    {STAT(same_key), OF_RULES, ANY_ROLE, SYNC_LOG_WARN, "the remote's listing held ",
     "rules whose policy and cidr another listed rule has: one of each is cached, the other "
     "left out (the remote holds both: look there)"},
    {STAT(requeued), OF_BOTH, ANY_ROLE, SYNC_LOG_INFO, "",
     "creates not found remotely: queued again"},
};
#undef STAT

static size_t stat_of(const store_pull_stats *s, size_t offset)
{
    return *(const size_t *)((const char *)s + offset);
}

static void log_merge(engine *e, const store_pull_stats *r, const store_pull_stats *c)
{
    engine_log(e, SYNC_LOG_INFO, "pulled %zu rules and %zu credentials", r->pulled,
               c->pulled);
    unsigned skip = e->opt.follower ? NOT_FOLLOWER : FOLLOWER;
    for (size_t i = 0; i < sizeof merge_lines / sizeof merge_lines[0]; i++) {
        const merge_line *l = &merge_lines[i];
        size_t n = (l->of & OF_RULES ? stat_of(r, l->offset) : 0) +
                   (l->of & OF_CREDS ? stat_of(c, l->offset) : 0);
        if (n && l->role != skip)
            engine_log(e, l->level, "%s%zu %s", l->before, n, l->after);
    }
}

static error_code count_edited(engine *e, size_t *out, error_info *err)
{
    return engine_count_states(e, 1u << MODEL_STATE_EDITED, out, err);
}

bool engine_pull(engine *e)
{
    error_info err;
    engine_phase(e, SYNC_PHASE_PULL, 0);
    if (store_pull_begin(e->st, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    e->refused = 0;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        if (!list_all(e, (model_kind)k)) {
            store_pull_release(e->st); /* nothing to merge: give the memory back */
            return false;
        }
    }
    engine_phase(e, SYNC_PHASE_RECONCILE, 1);
    store_pull_stats r, c;
    size_t edited_before = 0, edited_after = 0;
    if (count_edited(e, &edited_before, &err) || store_pull_merge(e->st, &r, &c, &err) ||
        count_edited(e, &edited_after, &err)) {
        store_pull_release(e->st);
        engine_db_fail(e, &err);
        return false;
    }
    sync_report *rep = e->report;
    rep->pulled_rules = r.pulled;
    rep->pulled_creds = c.pulled;
    rep->refused = e->refused;
    rep->remote_added += r.added + c.added;
    rep->remote_deleted += r.remote_deleted + c.remote_deleted;
    rep->adopted += r.adopted;
    rep->conflicts += r.conflicts + c.conflicts + r.edit_conflicts + c.edit_conflicts;
    e->pulled = true;
    log_merge(e, &r, &c);
    /* Every pull, not only one that removed something: rows an older version
     * kept go too. */
    if (e->opt.follower && store_pull_forget_removed(e->st, NULL, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    /* Edits the merge made (a credential still carrying its marker) are sent by
     * another round; those the push left for later wait for the next sync. */
    size_t new_edits = edited_after > edited_before ? edited_after - edited_before : 0;
    e->requeued = r.requeued + c.requeued + c.orphaned + c.strays + new_edits;
    engine_step(e, 1);
    return true;
}
