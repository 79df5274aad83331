/* The credentials view: keyset pages of the cached credentials. */
#include "view_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct creds_ctx {
    ui_app *app;
    ui_rows_buf buf;
} creds_ctx;

static const ui_table_col cols[] = {
    {"ID", 16, 33, true},  {"DESCRIPTION", 16, 40, false}, {"STATE", 8, 14, false},
    {"ACL", 10, 0, false}, {"OWNER", 8, 33, true},         {"CREATED", 20, 20, false},
};

static const char *const sorts[] = {"id", "description", "state"};
static const store_sort sort_of[] = {STORE_SORT_ID, STORE_SORT_DESCRIPTION, STORE_SORT_STATE};

static void store_query_of(const ui_table_query *q, store_query *sq)
{
    memset(sq, 0, sizeof *sq);
    sq->filter = q->filter;
    sq->sort = sort_of[q->sort >= 0 && q->sort < (int)(sizeof sorts / sizeof sorts[0])
                           ? q->sort : 0];
}

static error_code creds_page(void *p, const ui_table_query *q, const char *cursor,
                             store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                             error_info *err)
{
    creds_ctx *ctx = p;
    *count = 0;
    if (ui_rows_creds(&ctx->buf, limit, err) != ERROR_OK)
        return err->code;
    store_query sq;
    store_query_of(q, &sq);
    size_t n = 0;
    store *st = ui_app_browse_store(ctx->app);
    if (store_cred_page(st, &sq, cursor, dir, limit, ctx->buf.creds, &n, err) != ERROR_OK)
        return err->code;
    for (size_t i = 0; i < n; i++) {
        ui_cred_row(&ctx->buf.creds[i], &rows[i]);
        model_cred_clear(&ctx->buf.creds[i]);
    }
    *count = n;
    return ERROR_OK;
}

static error_code creds_count(void *p, const ui_table_query *q, size_t *out, error_info *err)
{
    creds_ctx *ctx = p;
    store_query sq;
    store_query_of(q, &sq);
    return store_cred_count(ui_app_browse_store(ctx->app), &sq, out, err);
}

static error_code creds_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                                void *fn_ctx, error_info *err)
{
    creds_ctx *ctx = p;
    return ui_cred_details(ui_app_browse_store(ctx->app), row->id, fn, fn_ctx, err);
}

static void creds_free(ui_view *v)
{
    creds_ctx *ctx = v->ctx;
    ui_rows_free(&ctx->buf);
    free(ctx);
}

static const ui_view_ops ops = {"creds", "Creds", true, NULL, NULL, creds_free};

error_code ui_view_creds_new(ui_app *app, ui_view **out, error_info *err)
{
    creds_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return error_set(err, ERROR_NOMEM, "out of memory");
    ctx->app = app;
    ui_table_source src = {cols, (int)(sizeof cols / sizeof cols[0]), sorts,
                           (int)(sizeof sorts / sizeof sorts[0]), NULL, creds_page,
                           creds_count, creds_details};
    if (ui_view_make(&ops, &src, ctx, out, err) != ERROR_OK) {
        free(ctx);
        return err->code;
    }
    return ERROR_OK;
}
