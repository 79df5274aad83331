/*
 * The rules view: keyset pages of the cached rules, optionally of one policy
 * ('p' picks one of the policy ids the cache knows, `:policy ID` names one).
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POLICIES_LISTED = 500 };

static const ui_table_col cols[] = {
    {"ID", 16, 33, true},      {"CIDR", 18, 43, false},   {"ACTION", 6, 6, false},
    {"STATE", 8, 14, false},   {"POLICY", 12, 33, true}, {"DESCRIPTION", 8, 0, false},
};

static const char *const sorts[] = {"id", "policy", "cidr", "action", "state"};
static const store_sort sort_of[] = {STORE_SORT_ID, STORE_SORT_POLICY, STORE_SORT_CIDR,
                                     STORE_SORT_ACTION, STORE_SORT_STATE};

void ui_view_rules_set_policy(ui_view *v, const char *policy)
{
    ui_table_set_policy(&v->table, policy);
}

typedef struct pick_ctx {
    ui_view *view;
    bool more;
} pick_ctx;

static void picked(ui_app *app, void *p, int chosen, const char *text)
{
    pick_ctx *pc = p;
    ui_view *v = pc->view;
    free(pc);
    if (chosen < 0)
        return;
    ui_view_rules_set_policy(v, chosen == 0 ? "" : text);
    if (chosen == 0)
        ui_app_status(app, false, "showing the rules of every policy");
    else
        ui_app_status(app, false, "rules of policy %s", text);
}

/* The picker lists the cached policy ids (the first POLICIES_LISTED of them). */
static void pick_policy(ui_view *v, ui_app *app)
{
    error_info e = {0};
    char (*ids)[MODEL_ID_MAX + 1] = calloc(POLICIES_LISTED + 1, sizeof *ids);
    const char **items = calloc(POLICIES_LISTED + 2, sizeof *items);
    pick_ctx *pc = calloc(1, sizeof *pc);
    size_t n = 0;
    if (!ids || !items || !pc) {
        ui_app_status(app, true, "out of memory");
        goto out;
    }
    if (store_policy_ids(ui_app_browse_store(app), NULL, ids, POLICIES_LISTED + 1, &n,
                         &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        goto out;
    }
    if (n == 0) {
        ui_app_status(app, false, "no rules cached yet, so no policies to pick from");
        goto out;
    }
    pc->view = v;
    pc->more = n > POLICIES_LISTED;
    items[0] = "(all policies)";
    for (size_t i = 0; i < n && i < POLICIES_LISTED; i++)
        items[i + 1] = ids[i];
    size_t count = (n < POLICIES_LISTED ? n : POLICIES_LISTED) + 1;
    bool more = pc->more;
    error_code rc = ui_pick_open(app, more ? "Policy (the first 500; :policy ID for others)"
                                           : "Policy",
                                 items, count, picked, pc, &e);
    pc = NULL; /* picked() frees it, whatever happened */
    if (rc != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    else if (more)
        ui_app_status(app, false, "more policies than listed: :policy ID names any");
out:
    free(pc);
    free(ids);
    free(items);
}

static bool rules_request(ui_view *v, ui_app *app, ui_request req)
{
    if (req != UI_REQ_POLICY)
        return false;
    pick_policy(v, app);
    return true;
}

static void rules_describe(ui_view *v, char *buf, size_t size)
{
    if (v->table.policy[0])
        snprintf(buf, size, "policy %s", v->table.policy);
    else
        buf[0] = '\0';
}

static const ui_view_ops ops = {"rules", "Rules", true, rules_request, rules_describe};

static const ui_record_view def = {
    &ops,  UI_KIND_RULE, cols, (int)(sizeof cols / sizeof cols[0]),
    sorts, sort_of,      (int)(sizeof sorts / sizeof sorts[0]),
};

error_code ui_view_rules_new(ui_app *app, ui_view **out, error_info *err)
{
    return ui_view_records_new(app, &def, out, err);
}
