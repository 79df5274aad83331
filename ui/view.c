/*
 * What the record views share: rows of rules and credentials as table rows, their
 * details, scratch space for pages, and the view object itself.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_text.h"

error_code ui_rows_rules(ui_rows_buf *b, size_t n, error_info *err)
{
    if (n <= b->nrules)
        return ERROR_OK;
    model_rule *r = realloc(b->rules, n * sizeof *r);
    if (!r)
        return error_set(err, ERROR_NOMEM, "out of memory");
    b->rules = r;
    b->nrules = n;
    return ERROR_OK;
}

error_code ui_rows_creds(ui_rows_buf *b, size_t n, error_info *err)
{
    if (n <= b->ncreds)
        return ERROR_OK;
    model_cred *c = realloc(b->creds, n * sizeof *c);
    if (!c)
        return error_set(err, ERROR_NOMEM, "out of memory");
    memset(c + b->ncreds, 0, (n - b->ncreds) * sizeof *c);
    b->creds = c;
    b->ncreds = n;
    return ERROR_OK;
}

static void rows_free(ui_rows_buf *b)
{
    free(b->rules);
    free(b->creds);
    memset(b, 0, sizeof *b);
}

ui_style ui_state_style(model_state state)
{
    switch (state) {
    case MODEL_STATE_SYNCED:
        return (ui_style){0, UI_COLOR_OK};
    case MODEL_STATE_NEW:
    case MODEL_STATE_CREATING:
    case MODEL_STATE_DELETING:
        return (ui_style){0, UI_COLOR_PENDING};
    default:
        return (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR};
    }
}

void ui_cell_set(char *cell, const char *text)
{
    size_t n = ui_text_prefix(text ? text : "", UI_TABLE_CELL_MAX - 1);
    memcpy(cell, text ? text : "", n);
    cell[n] = '\0';
}

void ui_state_note(model_state state, const char *error, ui_table_row *row)
{
    bool settled = state == MODEL_STATE_SYNCED || state == MODEL_STATE_NEW ||
                   state == MODEL_STATE_CREATING || state == MODEL_STATE_DELETING;
    if (settled || !error || !error[0]) {
        row->note[0] = '\0';
        return;
    }
    char note[UI_TABLE_CELL_MAX];
    snprintf(note, sizeof note, "%s: %s", model_state_name(state), error);
    ui_cell_set(row->note, note);
}

void ui_rule_row(const model_rule *r, ui_table_row *row)
{
    snprintf(row->key, sizeof row->key, "%s", r->id);
    snprintf(row->id, sizeof row->id, "%s", r->id);
    row->kind = UI_KIND_RULE;
    ui_cell_set(row->cells[0], r->id);
    ui_cell_set(row->cells[1], r->cidr);
    ui_cell_set(row->cells[2], model_action_name(r->action));
    ui_cell_set(row->cells[3], model_state_name(r->state));
    ui_cell_set(row->cells[4], r->policy_id);
    ui_cell_set(row->cells[5], r->description);
    row->style = ui_state_style(r->state);
    row->style_col = 3;
    ui_state_note(r->state, r->error, row);
}

void ui_acl_text(const model_acl *acl, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < acl->count && len + 1 < size; i++) {
        int n = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", acl->rules[i]);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    if (len >= size)
        buf[ui_text_prefix(buf, size - 1)] = '\0';
}

void ui_cred_row(const model_cred *c, ui_table_row *row)
{
    snprintf(row->key, sizeof row->key, "%s", c->id);
    snprintf(row->id, sizeof row->id, "%s", c->id);
    row->kind = UI_KIND_CRED;
    char acl[UI_TABLE_CELL_MAX];
    ui_acl_text(&c->acl, acl, sizeof acl);
    ui_cell_set(row->cells[0], c->id);
    ui_cell_set(row->cells[1], c->description);
    ui_cell_set(row->cells[2], model_state_name(c->state));
    ui_cell_set(row->cells[3], c->acl.count ? acl : "(any)");
    ui_cell_set(row->cells[4], c->owner_id);
    ui_cell_set(row->cells[5], c->created_at);
    row->style = ui_state_style(c->state);
    row->style_col = 2;
    ui_state_note(c->state, c->error, row);
}

error_code ui_rule_details(store *st, const char *id, ui_table_detail_fn fn, void *ctx,
                           error_info *err)
{
    model_rule r;
    if (store_rule_get(st, id, &r, err) != ERROR_OK)
        return err->code;
    fn(ctx, "id", r.id);
    fn(ctx, "cidr", r.cidr);
    fn(ctx, "action", model_action_name(r.action));
    fn(ctx, "policy", r.policy_id);
    fn(ctx, "policy uri", r.policy_uri);
    fn(ctx, "description", r.description);
    fn(ctx, "metadata", r.metadata);
    fn(ctx, "state", model_state_name(r.state));
    fn(ctx, "error", r.error);
    fn(ctx, "created", r.created_at);
    fn(ctx, "uri", r.uri);
    return ERROR_OK;
}

/* Whether this machine holds the credential's token; the token itself is wiped
 * at once (the details never show it: 't' does, after asking). */
static const char *token_status(store *st, const char *id)
{
    char *token = NULL;
    error_info e = {0};
    if (store_token_get(st, id, &token, &e) != ERROR_OK)
        return "not held on this machine";
    model_wipe(token, strlen(token));
    free(token);
    return "held on this machine ('t' shows it)";
}

error_code ui_cred_details(store *st, const char *id, ui_table_detail_fn fn, void *ctx,
                           error_info *err)
{
    model_cred c = {0};
    if (store_cred_get(st, id, &c, err) != ERROR_OK)
        return err->code;
    fn(ctx, "id", c.id);
    fn(ctx, "description", c.description);
    fn(ctx, "owner", c.owner_id);
    if (c.acl.count == 0)
        fn(ctx, "acl", "(none: any address may be bound)");
    for (size_t i = 0; i < c.acl.count; i++)
        fn(ctx, i == 0 ? "acl" : "", c.acl.rules[i]);
    fn(ctx, "metadata", c.metadata);
    fn(ctx, "state", model_state_name(c.state));
    fn(ctx, "error", c.error);
    fn(ctx, "token", token_status(st, c.id));
    fn(ctx, "created", c.created_at);
    fn(ctx, "uri", c.uri);
    model_cred_clear(&c);
    return ERROR_OK;
}

error_code ui_view_make(ui_app *app, const ui_view_ops *ops, const ui_table_source *src,
                        ui_view **out, error_info *err)
{
    *out = NULL;
    ui_view *v = calloc(1, sizeof *v);
    ui_view_ctx *ctx = calloc(1, sizeof *ctx);
    if (!v || !ctx) {
        free(v);
        free(ctx);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    ctx->app = app;
    v->ops = ops;
    v->ctx = ctx;
    v->src = *src;
    v->src.ctx = ctx;
    if (ui_table_init(&v->table, &v->src, err) != ERROR_OK) {
        ui_view_free(v);
        return err->code;
    }
    *out = v;
    return ERROR_OK;
}

void ui_view_free(ui_view *v)
{
    if (!v)
        return;
    if (v->ctx)
        rows_free(&v->ctx->buf);
    free(v->ctx);
    ui_table_free(&v->table);
    free(v);
}

/* ---- the rules and credentials views' source -------------------------------------- */

static void record_query(const ui_record_view *d, const ui_table_query *q, store_query *sq)
{
    memset(sq, 0, sizeof *sq);
    if (d->kind == UI_KIND_RULE)
        sq->policy_id = q->policy;
    sq->filter = q->filter;
    sq->sort = d->sort_of[q->sort >= 0 && q->sort < d->nsorts ? q->sort : 0];
}

static error_code record_page(void *p, const ui_table_query *q, const char *cursor,
                              store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                              error_info *err)
{
    ui_view_ctx *ctx = p;
    store *st = ui_app_browse_store(ctx->app);
    store_query sq;
    record_query(ctx->records, q, &sq);
    size_t n = 0;
    *count = 0;
    if (ctx->records->kind == UI_KIND_RULE) {
        if (ui_rows_rules(&ctx->buf, limit, err) ||
            store_rule_page(st, &sq, cursor, dir, limit, ctx->buf.rules, &n, err))
            return err->code;
        for (size_t i = 0; i < n; i++)
            ui_rule_row(&ctx->buf.rules[i], &rows[i]);
    } else {
        if (ui_rows_creds(&ctx->buf, limit, err) ||
            store_cred_page(st, &sq, cursor, dir, limit, ctx->buf.creds, &n, err))
            return err->code;
        for (size_t i = 0; i < n; i++) {
            ui_cred_row(&ctx->buf.creds[i], &rows[i]);
            model_cred_clear(&ctx->buf.creds[i]);
        }
    }
    *count = n;
    return ERROR_OK;
}

static error_code record_count(void *p, const ui_table_query *q, size_t *out, error_info *err)
{
    ui_view_ctx *ctx = p;
    store *st = ui_app_browse_store(ctx->app);
    store_query sq;
    record_query(ctx->records, q, &sq);
    return ctx->records->kind == UI_KIND_RULE ? store_rule_count(st, &sq, out, err)
                                              : store_cred_count(st, &sq, out, err);
}

static error_code record_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                                 void *fn_ctx, error_info *err)
{
    ui_view_ctx *ctx = p;
    store *st = ui_app_browse_store(ctx->app);
    return ctx->records->kind == UI_KIND_RULE ? ui_rule_details(st, row->id, fn, fn_ctx, err)
                                              : ui_cred_details(st, row->id, fn, fn_ctx, err);
}

error_code ui_view_records_new(ui_app *app, const ui_record_view *def, ui_view **out,
                               error_info *err)
{
    ui_table_source src = {def->cols,   def->ncols,   def->sorts,   def->nsorts, NULL,
                           record_page, record_count, record_details};
    if (ui_view_make(app, def->ops, &src, out, err) != ERROR_OK)
        return err->code;
    // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): *out is set on ERROR_OK
    (*out)->ctx->records = def;
    return ERROR_OK;
}

typedef struct detail_ctx {
    ui_text_overlay *o;
    error_info err;
} detail_ctx;

static void add_detail(void *p, const char *label, const char *value)
{
    detail_ctx *d = p;
    if (d->err.code == ERROR_OK && value && (value[0] || !label[0]))
        ui_text_overlay_add(d->o, label, value, &d->err);
}

void ui_view_details(ui_view *v, ui_app *app)
{
    ui_table *t = &v->table;
    ui_table_refresh(t, false);
    const ui_table_row *row = ui_table_current(t);
    if (!row) {
        ui_app_status(app, false, "no row here");
        return;
    }
    if (!v->src.details) {
        ui_app_status(app, false, "no details for this view");
        return;
    }
    detail_ctx d = {0};
    char title[128];
    snprintf(title, sizeof title, "%s %s", v->ops->title, row->id[0] ? row->id : row->key);
    if (ui_text_overlay_new(title, &d.o, &d.err) != ERROR_OK) {
        ui_app_status(app, true, "%s", d.err.msg);
        return;
    }
    error_info e = {0};
    if (v->src.details(v->src.ctx, row, add_detail, &d, &e) != ERROR_OK || d.err.code) {
        ui_text_overlay_free(d.o);
        ui_app_status(app, true, "%s", e.code ? e.msg : d.err.msg);
        return;
    }
    ui_text_overlay_push(app, d.o);
}
