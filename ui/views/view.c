/*
 * What every view shares: the view object, store pages turned into table rows
 * through scratch rows, and the details overlay (Enter) of the current row.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grow the scratch rows to `n` (the store overwrites them: no need to clear). */
static error_code rows_reserve(ui_rows_buf *b, size_t n, error_info *err)
{
    if (n <= b->cap)
        return ERROR_OK;
    model_object *r = realloc(b->rows, n * sizeof *r);
    if (!r)
        return error_set(err, ERROR_NOMEM, "out of memory");
    b->rows = r;
    b->cap = n;
    return ERROR_OK;
}

error_code ui_rows_page(ui_view_ctx *ctx, model_kind kind, const store_query *q,
                        const char *cursor, store_dir dir, size_t limit, ui_row_fill fill,
                        ui_table_row *rows, size_t *count, error_info *err)
{
    *count = 0;
    if (limit == 0)
        return ERROR_OK;
    size_t n = 0;
    if (rows_reserve(&ctx->buf, limit, err) != ERROR_OK ||
        store_page(ui_app_browse_store(ctx->app), kind, q, cursor, dir, limit, ctx->buf.rows,
                   &n, err) != ERROR_OK)
        return err->code;
    for (size_t i = 0; i < n; i++) {
        fill(&ctx->buf.rows[i], &rows[i]);
        model_object_clear(&ctx->buf.rows[i]);
    }
    *count = n;
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
        free(v->ctx->buf.rows);
    free(v->ctx);
    ui_table_free(&v->table);
    free(v);
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
