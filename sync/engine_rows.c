/*
 * engine: the rows a run acts on, for every part of it: how many are in given
 * states (every row, or the scope's), walks over them (the store's keyset walk,
 * or the scope's rows read afresh) and what names a row in a log line. Calls no
 * engine file above it (push, edit, pull, engine.c).
 */
#include "engine_internal.h"

#include <stdlib.h>

enum { PAGE_ROWS = 32 };

/* ---- counts --------------------------------------------------------------- */

error_code engine_count_states(engine *e, unsigned states, size_t *out, error_info *err)
{
    *out = 0;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        size_t counts[MODEL_STATE_COUNT];
        if (store_state_counts(e->st, (model_kind)k, counts, err))
            return err->code;
        for (int s = 0; s < MODEL_STATE_COUNT; s++)
            *out += states & (1u << s) ? counts[s] : 0;
    }
    return ERROR_OK;
}

/* Rows of the scope whose state is in `states`. */
static error_code count_scoped(engine *e, unsigned states, size_t *out, error_info *err)
{
    *out = 0;
    for (size_t i = 0; i < e->opt.only_count; i++) {
        const sync_row_ref *ref = &e->opt.only[i];
        char canon[MODEL_ID_MAX + 1];
        model_state state;
        error_code rc = store_resolve_id(e->st, ref->kind, ref->id, canon, &state, err);
        if (rc == ERROR_NOT_FOUND)
            continue;
        if (rc != ERROR_OK)
            return rc;
        *out += (states >> state) & 1u;
    }
    return ERROR_OK;
}

error_code engine_count_queue(engine *e, unsigned states, size_t *out, error_info *err)
{
    return e->opt.scoped ? count_scoped(e, states, out, err)
                         : engine_count_states(e, states, out, err);
}

/* ---- walks --------------------------------------------------------------- */

/* Hand the scope's rows of `kind` in `states` to `visit` in pages of PAGE_ROWS
 * (read afresh, so a row another pass settled is seen as it is now). */
static void each_scoped(engine *e, model_kind kind, unsigned states, store_visit fn,
                        void *ctx)
{
    model_object *rows = calloc(PAGE_ROWS, sizeof *rows);
    if (!rows) {
        engine_fail(e, ENGINE_DB, "out of memory");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i <= e->opt.only_count && e->stop == ENGINE_GO; i++) {
        bool last = i == e->opt.only_count;
        const sync_row_ref *ref = last ? NULL : &e->opt.only[i];
        if (ref && ref->kind == kind) {
            error_info err;
            model_object_init(&rows[n], kind);
            error_code rc = store_get(e->st, kind, ref->id, &rows[n], &err);
            if (rc == ERROR_OK && ((states >> model_object_state(&rows[n])) & 1u))
                n++;
            else
                model_object_clear(&rows[n]);
            if (rc != ERROR_OK && rc != ERROR_NOT_FOUND)
                engine_db_fail(e, &err);
        }
        if (n == PAGE_ROWS || (last && n)) {
            error_info err;
            (void)fn(ctx, rows, n, &err);
            for (size_t k = 0; k < n; k++)
                model_object_clear(&rows[k]);
            n = 0;
        }
    }
    for (size_t k = 0; k < n; k++)
        model_object_clear(&rows[k]);
    free(rows);
}

void engine_walk(engine *e, model_kind kind, unsigned states, store_visit fn, void *ctx)
{
    if (e->opt.scoped) {
        each_scoped(e, kind, states, fn, ctx);
        return;
    }
    store_query q = {.states = states};
    error_info err;
    if (store_walk(e->st, kind, &q, PAGE_ROWS, fn, ctx, &err) && e->stop == ENGINE_GO)
        engine_db_fail(e, &err);
}

typedef struct outbox_walk {
    engine *e;
    engine_row_fn fn;
} outbox_walk;

/* Any code but ERROR_OK ends the store's walk: the engine's own stop uses
 * ERROR_STATE, told apart from a database failure by e->stop. */
static error_code visit(void *wp, model_object *rows, size_t n, error_info *err)
{
    (void)err;
    outbox_walk *w = wp;
    for (size_t i = 0; i < n && w->e->stop == ENGINE_GO; i++)
        w->fn(w->e, &rows[i]);
    return w->e->stop == ENGINE_GO ? ERROR_OK : ERROR_STATE;
}

void engine_each_row(engine *e, model_kind kind, unsigned states, engine_row_fn fn)
{
    outbox_walk w = {.e = e, .fn = fn};
    engine_walk(e, kind, states, visit, &w);
}

/* ---- log lines ----------------------------------------------------------- */

/* A label that is only the row's id adds nothing to a line that names the id. */
const char *engine_row_label(const model_object *row)
{
    const char *label = kind_label(row);
    return label == model_object_id(row) ? "" : label;
}
