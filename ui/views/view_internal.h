/*
 * Shared by the views (ui/views/view*.c): the state of a row source and store
 * pages turned into table rows. Private.
 */
#ifndef RAMPART_UI_VIEW_INTERNAL_H
#define RAMPART_UI_VIEW_INTERNAL_H

#include "../state/ui_overlays.h"
#include "ui_record.h"
#include "ui_views.h"

/* Scratch rows of a store source, grown to the largest page asked for. */
typedef struct ui_rows_buf {
    model_object *rows;
    size_t cap;
} ui_rows_buf;

/* What every view's row source reads from (its ctx, freed with the view). */
typedef struct ui_view_ctx {
    ui_app *app;
    ui_rows_buf buf;               /* scratch rows of store pages */
    const ui_record_kind *records; /* NULL unless a record view */
} ui_view_ctx;

/* How a source turns one record into a table row. */
typedef void (*ui_row_fill)(const model_object *obj, ui_table_row *row);

/*
 * One keyset page of `kind` (store_page on the views' store) as table rows: up to
 * `limit` rows after/before `cursor` (an id; NULL: from the end), each made by
 * `fill` into rows[0..*count). The store's rows are released before returning.
 */
error_code ui_rows_page(ui_view_ctx *ctx, model_kind kind, const store_query *q,
                        const char *cursor, store_dir dir, size_t limit, ui_row_fill fill,
                        ui_table_row *rows, size_t *count, error_info *err);

/* A view with its table over `src` (copied; its ctx is set to the view's own
 * ui_view_ctx for `app`). */
error_code ui_view_make(ui_app *app, const ui_view_ops *ops, const ui_table_source *src,
                        ui_view **out, error_info *err);

#endif
