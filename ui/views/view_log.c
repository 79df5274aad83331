/*
 * The log view: the sync's log lines, the console's errors and the agent's audit
 * lines, from the loop's bounded ring (the oldest lines fall off). Newest first.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rampart/ui_sync_text.h"

static const ui_table_col cols[] = {
    {"TIME", 8, 8, false, 0, false, false, false, "time", STORE_SORT_ID}, /* the ring's order */
    {"LEVEL", 5, 5, false, 0, false, false, false, NULL, STORE_SORT_ID},
    {"MESSAGE", 20, 0, false, 0, false, false, false, NULL, STORE_SORT_ID}};

static const char *level_name(sync_log_level l)
{
    return l == SYNC_LOG_ERROR ? "error" : l == SYNC_LOG_WARN ? "warn" : "info";
}

static bool matches(const ui_log_line *l, const char *filter)
{
    return !filter || !filter[0] || strcasestr(l->text, filter) ||
           strcasestr(level_name(l->level), filter);
}

static void to_row(const ui_log_line *l, ui_table_row *row)
{
    memset(row->cells, 0, sizeof row->cells);
    snprintf(row->key, sizeof row->key, "%020llu", l->seq);
    row->id[0] = '\0';
    row->note[0] = '\0';
    row->kind = -1;
    ui_cell_set(row->cells[0], l->time);
    ui_cell_set(row->cells[1], level_name(l->level));
    ui_cell_set(row->cells[2], l->text);
    row->style = l->level == SYNC_LOG_ERROR ? (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}
                 : l->level == SYNC_LOG_WARN ? (ui_style){0, UI_COLOR_PENDING}
                                             : (ui_style){0, UI_COLOR_DEFAULT};
    row->style_col = 1;
}

static error_code log_page(void *p, const store_query *q, const char *cursor,
                           store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                           error_info *err)
{
    (void)err;
    ui_view_ctx *ctx = p;
    const ui_log_ring *r = ui_app_log_ring(ctx->app);
    unsigned long long at = cursor ? strtoull(cursor, NULL, 10) : 0;
    size_t n = 0;
    if (dir == STORE_FORWARD) {
        for (size_t i = 0; i < r->len && n < limit; i++) {
            const ui_log_line *l = ui_log_at(r, i);
            if ((!cursor || l->seq > at) && matches(l, q->filter))
                to_row(l, &rows[n++]);
        }
    } else {
        for (size_t i = r->len; i-- > 0 && n < limit;) {
            const ui_log_line *l = ui_log_at(r, i);
            if ((!cursor || l->seq < at) && matches(l, q->filter))
                to_row(l, &rows[n++]);
        }
        for (size_t i = 0; i < n / 2; i++) { /* ascending, as sources return rows */
            ui_table_row tmp = rows[i];
            rows[i] = rows[n - 1 - i];
            rows[n - 1 - i] = tmp;
        }
    }
    *count = n;
    return ERROR_OK;
}

static error_code log_count(void *p, const store_query *q, size_t *out, error_info *err)
{
    (void)err;
    ui_view_ctx *ctx = p;
    const ui_log_ring *r = ui_app_log_ring(ctx->app);
    size_t n = 0;
    for (size_t i = 0; i < r->len; i++)
        n += matches(ui_log_at(r, i), q->filter);
    *out = n;
    return ERROR_OK;
}

/* A failure's typed parts: its cause (named from its type and status, as the
 * header names it), the status, the server's error code, the operation id. */
static void failure_details(const ui_log_line *l, ui_table_detail_fn fn, void *fn_ctx)
{
    sync_failure f = {.kind = l->failure, .http_status = l->http_status};
    char buf[64];
    fn(fn_ctx, "cause", ui_failure_text(&f, false, buf, sizeof buf));
    if (l->http_status > 0) {
        snprintf(buf, sizeof buf, "%d", l->http_status);
        fn(fn_ctx, "http status", buf);
    }
    if (l->error_code[0])
        fn(fn_ctx, "error code", l->error_code);
    if (l->operation_id[0])
        fn(fn_ctx, "operation", l->operation_id);
}

static error_code log_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                              void *fn_ctx, error_info *err)
{
    (void)err;
    ui_view_ctx *ctx = p;
    const ui_log_ring *r = ui_app_log_ring(ctx->app);
    unsigned long long seq = strtoull(row->key, NULL, 10);
    const char *text = row->cells[2];
    const ui_log_line *line = NULL;
    for (size_t i = 0; i < r->len; i++) {
        if (ui_log_at(r, i)->seq == seq)
            line = ui_log_at(r, i);
    }
    if (line)
        text = line->text; /* the whole line, not the cell */
    fn(fn_ctx, "time", row->cells[0]);
    fn(fn_ctx, "level", row->cells[1]);
    fn(fn_ctx, "message", text);
    if (line && line->failure != SYNC_FAILURE_NONE)
        failure_details(line, fn, fn_ctx);
    return ERROR_OK;
}

static const ui_view_ops ops = {"log", "Log", false, MODEL_KIND_RULE, NULL, NULL, NULL};

error_code ui_view_log_new(ui_app *app, ui_view **out, error_info *err)
{
    ui_table_source src = {cols,      (int)(sizeof cols / sizeof cols[0]), NULL, log_page,
                           log_count, log_details};
    if (ui_view_make(app, &ops, &src, out, err) != ERROR_OK)
        return err->code;
    ui_table_set_sort(&(*out)->table, 0, true); /* newest first */
    return ERROR_OK;
}
