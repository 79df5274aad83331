/*
 * The rules view: keyset pages of the cached rules, optionally of one policy
 * ('p' picks one of the policy ids the cache knows, `:policy ID` names one).
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POLICIES_LISTED = 500 };

typedef struct rules_ctx {
    ui_app *app;
    ui_rows_buf buf;
} rules_ctx;

static const ui_table_col cols[] = {
    {"ID", 16, 33, true},      {"CIDR", 18, 43, false},   {"ACTION", 6, 6, false},
    {"STATE", 8, 14, false},   {"POLICY", 12, 33, true}, {"DESCRIPTION", 8, 0, false},
};

static const char *const sorts[] = {"id", "policy", "cidr", "action", "state"};
static const store_sort sort_of[] = {STORE_SORT_ID, STORE_SORT_POLICY, STORE_SORT_CIDR,
                                     STORE_SORT_ACTION, STORE_SORT_STATE};

static void store_query_of(const ui_table_query *q, store_query *sq)
{
    memset(sq, 0, sizeof *sq);
    sq->policy_id = q->policy;
    sq->filter = q->filter;
    sq->sort = sort_of[q->sort >= 0 && q->sort < (int)(sizeof sorts / sizeof sorts[0])
                           ? q->sort : 0];
}

static error_code rules_page(void *p, const ui_table_query *q, const char *cursor,
                             store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                             error_info *err)
{
    rules_ctx *ctx = p;
    *count = 0;
    if (ui_rows_rules(&ctx->buf, limit, err) != ERROR_OK)
        return err->code;
    store_query sq;
    store_query_of(q, &sq);
    size_t n = 0;
    store *st = ui_app_browse_store(ctx->app);
    if (store_rule_page(st, &sq, cursor, dir, limit, ctx->buf.rules, &n, err) != ERROR_OK)
        return err->code;
    for (size_t i = 0; i < n; i++)
        ui_rule_row(&ctx->buf.rules[i], &rows[i]);
    *count = n;
    return ERROR_OK;
}

static error_code rules_count(void *p, const ui_table_query *q, size_t *out, error_info *err)
{
    rules_ctx *ctx = p;
    store_query sq;
    store_query_of(q, &sq);
    return store_rule_count(ui_app_browse_store(ctx->app), &sq, out, err);
}

static error_code rules_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                                void *fn_ctx, error_info *err)
{
    rules_ctx *ctx = p;
    return ui_rule_details(ui_app_browse_store(ctx->app), row->id, fn, fn_ctx, err);
}

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

static void rules_free(ui_view *v)
{
    rules_ctx *ctx = v->ctx;
    ui_rows_free(&ctx->buf);
    free(ctx);
}

static const ui_view_ops ops = {"rules", "Rules", true, rules_request, rules_describe,
                                rules_free};

error_code ui_view_rules_new(ui_app *app, ui_view **out, error_info *err)
{
    rules_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return error_set(err, ERROR_NOMEM, "out of memory");
    ctx->app = app;
    ui_table_source src = {cols, (int)(sizeof cols / sizeof cols[0]), sorts,
                           (int)(sizeof sorts / sizeof sorts[0]), NULL, rules_page,
                           rules_count, rules_details};
    if (ui_view_make(&ops, &src, ctx, out, err) != ERROR_OK) {
        free(ctx);
        return err->code;
    }
    return ERROR_OK;
}
