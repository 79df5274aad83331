/*
 * The record views: the rules view and the credentials view are one view over a
 * kind, its rows the store's keyset pages of that kind (one row a record), its
 * columns, sorts and details the kind's data (ui/views/record_kinds.c). What one kind
 * adds (the rules view's policy) comes through the hooks of its view ops.
 */
#include "view_internal.h"

static error_code record_page(void *p, const store_query *q, const char *cursor,
                              store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                              error_info *err)
{
    ui_view_ctx *ctx = p;
    return ui_rows_page(ctx, ctx->records->kind, q, cursor, dir, limit, ui_record_row, rows,
                        count, err);
}

static error_code record_count(void *p, const store_query *q, size_t *out, error_info *err)
{
    ui_view_ctx *ctx = p;
    return store_count(ui_app_browse_store(ctx->app), ctx->records->kind, q, out, err);
}

static error_code record_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                                 void *fn_ctx, error_info *err)
{
    ui_view_ctx *ctx = p;
    return ui_record_details(ui_app_browse_store(ctx->app), ctx->records->kind, row->id, fn,
                             fn_ctx, err);
}

error_code ui_view_records_new(ui_app *app, model_kind kind, ui_view **out, error_info *err)
{
    const ui_record_kind *k = ui_record_kind_get(kind);
    ui_table_source src = {k->cols, k->ncols, NULL, record_page, record_count, record_details};
    if (ui_view_make(app, &k->view, &src, out, err) != ERROR_OK)
        return err->code;
    // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): *out is set on ERROR_OK
    (*out)->ctx->records = k;
    return ERROR_OK;
}
