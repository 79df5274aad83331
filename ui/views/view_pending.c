/*
 * The pending view: what the next sync does, as `rampart plan` shows it (+ create,
 * - delete, ! needs attention, ~ an edit or changed remotely), rules then
 * credentials, each with its reason (a failed row's error, an edit's fields). Keyset pages over both tables: a key is
 * "r:ID" or "c:ID", and a page runs on from the last rule into the credentials.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reason is what this view is for: placed and grown first after the sign,
 * the kind and the state (ranks), so a long reason keeps the room; what a row is
 * about and its id then grow toward their widest cells on screen, and what is
 * left goes to the reason. A cut cell is whole in the details (Enter). */
static const ui_table_col cols[] = {
    {"", 1, 1, false, 0, false, false, false, NULL, STORE_SORT_ID},
    {"KIND", 4, 4, false, 1, false, false, false, NULL, STORE_SORT_ID},
    {"ID", 16, 48, true, 5, false, true, false, "id", STORE_SORT_ID},
    {"WHAT", 20, 64, false, 4, false, true, false, NULL, STORE_SORT_ID},
    {"STATE", 8, 14, false, 2, false, true, false, NULL, STORE_SORT_ID},
    {"REASON", 8, 0, false, 3, false, false, false, NULL, STORE_SORT_ID},
};

/* A row of the plan: sign, kind, id, what, state, the reason. */
static void plan_row(const model_object *obj, ui_table_row *row)
{
    const ui_record_kind *k = ui_record_kind_get(obj->kind);
    const char *id = model_object_id(obj);
    model_state state = model_object_state(obj);
    const char *error = model_object_error(obj);
    memset(row->cells, 0, sizeof row->cells);
    snprintf(row->key, sizeof row->key, "%c:%s", k->tag, id);
    snprintf(row->id, sizeof row->id, "%s", id);
    row->kind = (int)obj->kind;
    const char *why;
    char sign[2] = {sync_plan_line(state, error, &why), '\0'};
    if (!sign[0])
        sign[0] = ' ';
    char what[UI_TABLE_CELL_MAX];
    ui_record_format(obj, k->what, what, sizeof what);
    ui_cell_set(row->cells[0], sign);
    ui_cell_set(row->cells[1], k->short_noun);
    ui_cell_set(row->cells[2], id);
    ui_cell_set(row->cells[3], what[0] ? what : k->what_empty);
    ui_cell_set(row->cells[4], model_state_name(state));
    ui_cell_set(row->cells[5], why);
    row->style = ui_state_style(state);
    row->style_col = 4;
    ui_state_note(state, error, row);
}

/* An edited or conflicting row's reason is what `rampart plan` says of it: its
 * fields (cidr 10.0.0.0/8 -> 10.0.0.0/16) or both sides of the conflict. */
static void describe_edits(store *st, ui_table_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        model_state state;
        if (!model_state_parse(rows[i].cells[4], &state) ||
            (state != MODEL_STATE_EDITED && state != MODEL_STATE_CONFLICT))
            continue;
        store_edit_info info;
        if (store_edit_get(st, (model_kind)rows[i].kind, rows[i].id, &info, NULL) != ERROR_OK)
            continue; /* the generic reason stays */
        model_object row;
        model_object_init(&row, (model_kind)rows[i].kind);
        const char *error = "";
        if (store_get(st, row.kind, rows[i].id, &row, NULL) == ERROR_OK)
            error = model_object_error(&row);
        char why[UI_TABLE_CELL_MAX];
        ui_cell_set(rows[i].cells[5], sync_edit_describe(&info, error, why, sizeof why));
        model_object_clear(&row);
        store_edit_info_clear(&info);
    }
}

/* The plan's rows of a kind: the query's filter, the states a sync acts on. */
static void plan_query(const store_query *q, store_query *out)
{
    memset(out, 0, sizeof *out);
    out->filter = q->filter;
    out->states = sync_plan_states();
}

/* The kind a key's tag names ("r:…"), -1 for none. */
static int kind_of_key(const char *key)
{
    for (int k = 0; key && key[0] && k < MODEL_KIND_COUNT; k++) {
        if (key[1] == ':' && key[0] == ui_record_kind_get((model_kind)k)->tag)
            return k;
    }
    return -1;
}

/* Kinds in model_kind order, each kind's rows in id order: forward from the
 * cursor's kind (after its id) on into the next kinds; backward from it (before
 * its id) into the earlier ones, whose rows go in front. */
static error_code pending_page(void *p, const store_query *q, const char *cursor,
                               store_dir dir, size_t limit, ui_table_row *rows, size_t *count,
                               error_info *err)
{
    ui_view_ctx *ctx = p;
    store_query pq;
    plan_query(q, &pq);
    int at = kind_of_key(cursor);
    const char *id = at >= 0 && cursor[2] ? cursor + 2 : NULL;
    bool fwd = dir == STORE_FORWARD;
    int step = fwd ? 1 : -1, k = at >= 0 ? at : fwd ? 0 : MODEL_KIND_COUNT - 1;
    size_t n = 0;
    *count = 0;
    for (; k >= 0 && k < MODEL_KIND_COUNT && n < limit; k += step) {
        ui_table_row *into = rows + n;
        if (!fwd) { /* this kind's rows go before those read so far: make room */
            memmove(rows + limit - n, rows, n * sizeof *rows);
            into = rows;
        }
        size_t got = 0;
        if (ui_rows_page(ctx, (model_kind)k, &pq, k == at ? id : NULL, dir, limit - n,
                         plan_row, into, &got, err) != ERROR_OK)
            return err->code;
        describe_edits(ui_app_browse_store(ctx->app), into, got);
        if (!fwd)
            memmove(rows + got, rows + limit - n, n * sizeof *rows);
        n += got;
    }
    *count = n;
    return ERROR_OK;
}

static error_code pending_count(void *p, const store_query *q, size_t *out, error_info *err)
{
    ui_view_ctx *ctx = p;
    store_query pq;
    plan_query(q, &pq);
    *out = 0;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        size_t n = 0;
        if (store_count(ui_app_browse_store(ctx->app), (model_kind)k, &pq, &n, err))
            return err->code;
        *out += n;
    }
    return ERROR_OK;
}

static error_code pending_details(void *p, const ui_table_row *row, ui_table_detail_fn fn,
                                  void *fn_ctx, error_info *err)
{
    ui_view_ctx *ctx = p;
    fn(fn_ctx, "plan", row->cells[5]);
    return ui_record_details(ui_app_browse_store(ctx->app), (model_kind)row->kind, row->id,
                             fn, fn_ctx, err);
}

/* The header: the impact_log worker's last summary. */
static void pending_describe(const ui_view *v, char *buf, size_t size)
{
    snprintf(buf, size, "%s", v->ctx->app->impact_text);
}

static const ui_view_ops ops = {"pending", "Pending", false, MODEL_KIND_RULE, NULL,
                                pending_describe, NULL};

error_code ui_view_pending_new(ui_app *app, ui_view **out, error_info *err)
{
    ui_table_source src = {cols, (int)(sizeof cols / sizeof cols[0]), NULL, pending_page,
                           pending_count, pending_details};
    return ui_view_make(app, &ops, &src, out, err);
}
