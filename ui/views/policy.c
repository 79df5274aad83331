/*
 * A rule's policy in the console (ui_record.h), in one place: the rules view's
 * scope (one policy's rules: `:policy ID`, 'p' picks one of the cached policy ids,
 * 'q' shows all again), the header naming it, and what the rule form offers for
 * its policy field (the cached ids, the view's policy first).
 */
#include <stdio.h>
#include <stdlib.h>

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

static void picked(ui_app *app, void *p, int chosen, const char *text)
{
    ui_view *v = p;
    if (chosen >= 0)
        ui_policy_scope(v, app, chosen == 0 ? "" : text);
}

/* The picker lists "(all policies)" then the cached ids (one more is read to know
 * whether there are others). */
static void pick_policy(ui_view *v, ui_app *app)
{
    error_info e = {0};
    char (*ids)[MODEL_ID_MAX + 1] = calloc(POLICIES_LISTED + 1, sizeof *ids);
    const char **items = calloc(POLICIES_LISTED + 2, sizeof *items);
    size_t n = 0;
    if (!ids || !items)
        ui_app_status(app, true, "out of memory");
    else if (load_ids(app, ids, POLICIES_LISTED + 1, &n, &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    else if (n == 0)
        ui_app_status(app, false, "no rules cached yet, so no policies to pick from");
    else {
        bool more = n > POLICIES_LISTED;
        size_t count = (more ? POLICIES_LISTED : n) + 1;
        items[0] = "(all policies)";
        for (size_t i = 1; i < count; i++)
            items[i] = ids[i - 1];
        if (ui_pick_open(app, more ? "Policy (the first 500; :policy ID for others)" : "Policy",
                         items, count, picked, v, &e) != ERROR_OK)
            ui_app_status(app, true, "%s", e.msg);
        else if (more)
            ui_app_status(app, false, "more policies than listed: :policy ID names any");
    }
    free(ids);
    free(items);
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
