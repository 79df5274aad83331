/*
 * The pending view: what the next sync does, as `rampart plan` shows it (+ create,
 * - delete, ! needs attention, ~ changed remotely), rules then credentials, each
 * with its reason (a failed row's error). Keyset pages over both tables: a key is
 * "r:ID" or "c:ID", and a page runs on from the last rule into the credentials.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reason is what this view is for: the other columns stay narrow (a cut
 * state or description is whole in the details, Enter) so it gets the room. */
static const ui_table_col cols[] = {
    {"", 1, 1, false},       {"KIND", 4, 4, false},  {"ID", 16, 16, true},
    {"WHAT", 16, 24, false}, {"STATE", 8, 8, false}, {"REASON", 16, 0, false},
};

static const char *const sorts[] = {"id"};

static void plan_cells(model_state state, const char *error, ui_table_row *row)
{
    const char *why;
    char sign[2] = {sync_plan_line(state, error, &why), '\0'};
    if (!sign[0])
        sign[0] = ' ';
    ui_cell_set(row->cells[0], sign);
    ui_cell_set(row->cells[4], model_state_name(state));
    ui_cell_set(row->cells[5], why);
    row->style = ui_state_style(state);
    row->style_col = 4;
    ui_state_note(state, error, row);
}

static void rule_cells(const model_rule *r, ui_table_row *row)
{
    memset(row->cells, 0, sizeof row->cells);
    snprintf(row->key, sizeof row->key, "r:%s", r->id);
    snprintf(row->id, sizeof row->id, "%s", r->id);
    row->kind = UI_KIND_RULE;
    char what[UI_TABLE_CELL_MAX];
    snprintf(what, sizeof what, "%s %s %s", r->cidr, model_action_name(r->action), r->policy_id);
    ui_cell_set(row->cells[1], "rule");
    ui_cell_set(row->cells[2], r->id);
    ui_cell_set(row->cells[3], what);
    plan_cells(r->state, r->error, row);
}

static void cred_cells(const model_cred *c, ui_table_row *row)
{
    memset(row->cells, 0, sizeof row->cells);
    snprintf(row->key, sizeof row->key, "c:%s", c->id);
    snprintf(row->id, sizeof row->id, "%s", c->id);
    row->kind = UI_KIND_CRED;
    ui_cell_set(row->cells[1], "cred");
    ui_cell_set(row->cells[2], c->id);
    ui_cell_set(row->cells[3], c->description[0] ? c->description : "(no description)");
    plan_cells(c->state, c->error, row);
}

static void query_of(const ui_table_query *q, store_query *sq)
{
    memset(sq, 0, sizeof *sq);
    sq->filter = q->filter;
    sq->states = sync_plan_states();
}

/* Rules then credentials, `nr` and `nc` of them, from the scratch rows. */
static void convert(ui_view_ctx *ctx, size_t nr, size_t nc, ui_table_row *rows)
{
    for (size_t i = 0; i < nr; i++)
        rule_cells(&ctx->buf.rules[i], &rows[i]);
    for (size_t i = 0; i < nc; i++) {
        cred_cells(&ctx->buf.creds[i], &rows[nr + i]);
        model_cred_clear(&ctx->buf.creds[i]);
    }
}

static error_code pending_page(void *p, const ui_table_query *q, const char *cursor,
                               store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                               error_info *err)
{
    ui_view_ctx *ctx = p;
    store *st = ui_app_browse_store(ctx->app);
    *count = 0;
    if (ui_rows_rules(&ctx->buf, limit, err) || ui_rows_creds(&ctx->buf, limit, err))
        return err->code;
    store_query sq;
    query_of(q, &sq);
    char kind = cursor ? cursor[0] : 0;
    const char *id = cursor && strlen(cursor) > 2 ? cursor + 2 : NULL;
    size_t nr = 0, nc = 0;
    error_code rc = ERROR_OK;
    if (dir == STORE_FORWARD) {
        if (kind != 'c')
            rc = store_rule_page(st, &sq, kind == 'r' ? id : NULL, dir, limit,
                                 ctx->buf.rules, &nr, err);
        if (rc == ERROR_OK && nr < limit)
            rc = store_cred_page(st, &sq, kind == 'c' ? id : NULL, dir, limit - nr,
                                 ctx->buf.creds, &nc, err);
    } else {
        if (kind != 'r')
            rc = store_cred_page(st, &sq, kind == 'c' ? id : NULL, dir, limit,
                                 ctx->buf.creds, &nc, err);
        if (rc == ERROR_OK && nc < limit)
            rc = store_rule_page(st, &sq, kind == 'r' ? id : NULL, dir, limit - nc,
                                 ctx->buf.rules, &nr, err);
    }
    if (rc != ERROR_OK) {
        for (size_t i = 0; i < nc; i++)
            model_cred_clear(&ctx->buf.creds[i]);
        return rc;
    }
    convert(ctx, nr, nc, rows);
    *count = nr + nc;
    return ERROR_OK;
}

static error_code pending_count(void *p, const ui_table_query *q, size_t *out, error_info *err)
{
    ui_view_ctx *ctx = p;
    store_query sq;
    query_of(q, &sq);
    size_t rules = 0, creds = 0;
    if (store_rule_count(ui_app_browse_store(ctx->app), &sq, &rules, err) ||
        store_cred_count(ui_app_browse_store(ctx->app), &sq, &creds, err))
        return err->code;
    *out = rules + creds;
    return ERROR_OK;
}

static error_code pending_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                                  void *fn_ctx, error_info *err)
{
    ui_view_ctx *ctx = p;
    fn(fn_ctx, "plan", row->cells[5]);
    if (row->kind == UI_KIND_RULE)
        return ui_rule_details(ui_app_browse_store(ctx->app), row->id, fn, fn_ctx, err);
    return ui_cred_details(ui_app_browse_store(ctx->app), row->id, fn, fn_ctx, err);
}

static const ui_view_ops ops = {"pending", "Pending", false, NULL, NULL};

error_code ui_view_pending_new(ui_app *app, ui_view **out, error_info *err)
{
    ui_table_source src = {cols, (int)(sizeof cols / sizeof cols[0]), sorts, 1, NULL,
                           pending_page, pending_count, pending_details};
    return ui_view_make(app, &ops, &src, out, err);
}
