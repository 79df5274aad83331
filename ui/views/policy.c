/*
 * A rule's policy in the console (ui_record.h), in one place: the rules view's
 * scope (one policy's rules: `:policy ID`, 'p' picks one of the cached policies,
 * each with how many rules it holds, 'q' shows all again), the header naming it, and what the rule form offers for
 * its policy field (the cached ids, the view's policy first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../widgets/ui_text.h"
#include "view_internal.h"

/* Policy ids listed by the picker and offered by the form: enough to cycle
 * through, not the world (`:policy ID` names any other). */
enum { POLICIES_LISTED = 500, POLICY_PAGE = 100 };

/* Up to `max` cached policy ids, in order, into `ids` (max of them). */
static error_code load_ids(ui_app *app, char (*ids)[MODEL_ID_MAX + 1], size_t max,
                           size_t *count, error_info *err)
{
    *count = 0;
    const char *after = "";
    while (*count < max) {
        size_t want = max - *count < POLICY_PAGE ? max - *count : POLICY_PAGE, got = 0;
        if (store_policy_ids(ui_app_browse_store(app), after, ids + *count, want, &got, err))
            return err->code;
        *count += got;
        if (got < want)
            break;
        after = ids[*count - 1];
    }
    return ERROR_OK;
}

void ui_policy_scope(ui_view *v, ui_app *app, const char *policy)
{
    store_query scope = {.policy_id = policy};
    ui_table_set_scope(&v->table, &scope);
    if (policy[0])
        ui_app_status(app, false, "rules of policy %s", policy);
    else
        ui_app_status(app, false, "showing the rules of every policy");
}

void ui_policy_describe(const ui_view *v, char *buf, size_t size)
{
    store_query q;
    ui_table_query(&v->table, &q);
    if (q.policy_id[0])
        snprintf(buf, size, "policy %s", q.policy_id);
    else
        buf[0] = '\0';
}

/* ---- the picker ('p') ------------------------------------------------------------ */

/* What the picker hands back: its view and the ids it listed (item i + 1 is
 * ids[i]); freed when it answers, which it does exactly once. */
typedef struct policy_pick {
    ui_view *v;
    store_policy_count *ids;
    size_t n;
} policy_pick;

static void picked(ui_app *app, void *p, int chosen, const char *text)
{
    (void)text;
    policy_pick *pick = p;
    if (app && chosen >= 0 && (size_t)chosen <= pick->n)
        ui_policy_scope(pick->v, app, chosen == 0 ? "" : pick->ids[chosen - 1].id);
    free(pick->ids);
    free(pick);
}

/* "ipp_x   12 rules": the ids padded to the longest, so the counts line up. */
static char **pick_items(const store_policy_count *ids, size_t n)
{
    char **items = calloc(n + 1, sizeof *items);
    if (!items)
        return NULL;
    int w = 0;
    for (size_t i = 0; i < n; i++)
        w = (int)strlen(ids[i].id) > w ? (int)strlen(ids[i].id) : w;
    items[0] = strdup("(all policies)");
    for (size_t i = 0; i < n && items[0]; i++) {
        char count[32];
        ui_text_count(ids[i].rules, count, sizeof count);
        size_t size = (size_t)w + sizeof count + 16;
        if (!(items[i + 1] = malloc(size)))
            break;
        snprintf(items[i + 1], size, "%-*s  %s rule%s", w, ids[i].id, count,
                 ids[i].rules == 1 ? "" : "s");
    }
    return items;
}

static void free_items(char **items, size_t n)
{
    for (size_t i = 0; items && i <= n; i++)
        free(items[i]);
    free(items);
}

/* Open the picker over the first `n` of `ids` (the pick takes them). */
static void open_picker(ui_view *v, ui_app *app, store_policy_count *ids, size_t n, bool more)
{
    error_info e = {0};
    policy_pick *pick = calloc(1, sizeof *pick);
    char **items = pick ? pick_items(ids, n) : NULL;
    bool whole = items != NULL;
    for (size_t i = 0; whole && i <= n; i++)
        whole = items[i] != NULL;
    if (!whole) {
        ui_app_status(app, true, "out of memory");
        free(ids);
        free(pick);
        free_items(items, n);
        return;
    }
    *pick = (policy_pick){v, ids, n};
    /* the pick answers exactly once, also when opening fails: it frees `pick` */
    if (ui_pick_open(app, more ? "Policy (the first 500; :policy ID for others)" : "Policy",
                     (const char *const *)items, n + 1, picked, pick, &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    else if (more)
        ui_app_status(app, false, "more policies than listed: :policy ID names any");
    free_items(items, n);
}

/* The picker lists "(all policies)" then the cached policies with how many rules
 * each holds, from one query (one more is read to know whether there are others). */
static void pick_policy(ui_view *v, ui_app *app)
{
    error_info e = {0};
    store_policy_count *ids = calloc(POLICIES_LISTED + 1, sizeof *ids);
    size_t n = 0;
    if (!ids) {
        ui_app_status(app, true, "out of memory");
        return;
    }
    if (store_policy_counts(ui_app_browse_store(app), "", ids, POLICIES_LISTED + 1, &n, &e) !=
        ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    else if (n == 0)
        ui_app_status(app, false, "no rules cached yet, so no policies to pick from");
    else {
        open_picker(v, app, ids, n > POLICIES_LISTED ? POLICIES_LISTED : n,
                    n > POLICIES_LISTED);
        return;
    }
    free(ids);
}

bool ui_policy_request(ui_view *v, ui_app *app, ui_request req)
{
    if (req != UI_REQ_POLICY)
        return false;
    pick_policy(v, app);
    return true;
}

/* ---- the rule form's offer ----------------------------------------------------- */

error_code ui_policy_offer(ui_app *app, ui_form_offer *out, error_info *err)
{
    static const char none[] = "";
    *out = (ui_form_offer){none, NULL, 0};
    out->ids = malloc(POLICIES_LISTED * sizeof *out->ids);
    if (!out->ids)
        return error_set(err, ERROR_NOMEM, "out of memory");
    if (load_ids(app, out->ids, POLICIES_LISTED, &out->count, err) != ERROR_OK)
        return err->code;
    store_query q;
    ui_table_query(&ui_app_view(app)->table, &q);
    out->initial = q.policy_id; /* the view's: the form opens from the rules view */
    return ERROR_OK;
}
