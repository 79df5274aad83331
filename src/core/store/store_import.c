/*
 * store: bulk import. Each row read from a file is matched with the cache first
 * (store.h says how: by id or local alias, then, for a rule, by its natural key),
 * and only what is new or different is written: a new row through the same gate
 * and insert as store_insert, a difference as the user's edit (store_edit).
 *
 * Memory does not grow with the import: nothing is kept per row here, the page
 * cache is held to IMPORT_CACHE_KIB for the import, and a large import drops the
 * rules' browsing indexes and builds them once at the end by SQLite's external
 * sort (temporary files, its in-memory runs bounded by the same cache size). The
 * natural key's unique index stays: it refuses a second live rule for a key at
 * the row that brings it, with store_insert's message, and it answers the
 * natural-key lookups. Measured on 1M rules in file order it costs no more than
 * the in-memory key set it replaced, which needed 16 MiB per million rows. The
 * change counter's triggers (migration 9) go with the browsing indexes: such an
 * import counts once at its finish instead of once per row.
 */
#include "store_compare.h"
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/validate.h"

enum {
    /* The page cache of an import (the writer's is larger): enough for the tree
     * paths of the table and its kept index, and the size of the sorter's
     * in-memory runs when the indexes are built. */
    IMPORT_CACHE_KIB = 4096,
    /* Indexes are dropped only for imports of at least this many rows: below it a
     * rebuild saves nothing worth its fixed cost. */
    IMPORT_REBUILD_MIN = 20000
};

struct store_import {
    store *st;
    model_kind kind;
    size_t existing;    /* rows of the kind's table when the import began */
    size_t added;       /* rows inserted since */
    bool rebuild;       /* the browsing indexes were dropped: build them at finish */
    char cache_size[24]; /* the connection's page cache before the import */
    char temp_store[8];  /* and its temporary store ("2": memory) */
    bool temp_switched;  /* moved to files for the index builds: moved back */
};

/* ---- connection settings ---------------------------------------------------- */

static error_code save_settings(store_import *imp, error_info *err)
{
    if (store_query_text(imp->st, "PRAGMA cache_size", imp->cache_size, sizeof imp->cache_size,
                         err) ||
        store_query_text(imp->st, "PRAGMA temp_store", imp->temp_store, sizeof imp->temp_store,
                         err))
        return err->code;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d", IMPORT_CACHE_KIB);
    return store_exec_sql(imp->st, sql, err);
}

static void restore_settings(store_import *imp)
{
    char sql[96];
    error_info ignored;
    if (imp->cache_size[0]) {
        snprintf(sql, sizeof sql, "PRAGMA cache_size = %s", imp->cache_size);
        store_exec_sql(imp->st, sql, &ignored);
    }
    if (imp->temp_switched)
        store_exec_sql(imp->st, "PRAGMA temp_store = MEMORY", &ignored);
}

/* ---- indexes ------------------------------------------------------------------ */

/*
 * Drop the rules' browsing indexes once the import is as large as the table it
 * goes into (SQLite builds an index by sorting, several times cheaper than a
 * B-tree insert per row and index). With a temporary store in memory SQLite would
 * sort a whole index in memory: the import sorts in files. SQLite refuses that
 * switch inside a transaction once the connection has used temporary tables; the
 * import then goes on, sorting in memory.
 */
static error_code maybe_drop_indexes(store_import *imp, size_t rows, error_info *err)
{
    if (imp->rebuild || imp->kind != MODEL_KIND_RULE || rows < IMPORT_REBUILD_MIN ||
        rows < imp->existing)
        return ERROR_OK;
    error_info ignored;
    if (strcmp(imp->temp_store, "2") == 0)
        imp->temp_switched =
            store_exec_sql(imp->st, "PRAGMA temp_store = FILE", &ignored) == ERROR_OK;
    /* The change counter's triggers too: the import counts once, at its finish. */
    if (store_exec_sql(imp->st, store_sql_rule_indexes(false), err) ||
        store_exec_sql(imp->st, store_sql_rule_change_triggers(false), err))
        return err->code;
    imp->st->indexes_dropped = true;
    imp->rebuild = true;
    return ERROR_OK;
}

error_code store_import_begin(store *st, model_kind kind, size_t expected_rows,
                              store_import **out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *out = NULL;
    if (!st->in_tx)
        return error_set(err, ERROR_STATE, "an import needs an open transaction");
    if (st->import_open)
        return error_set(err, ERROR_STATE, "another import is open");
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    store_import *imp = calloc(1, sizeof *imp);
    if (!imp)
        return error_set(err, ERROR_NOMEM, "out of memory");
    imp->st = st;
    imp->kind = kind;
    st->import_open = true;
    /* The cache is made small before the count reads the table into it: freed
     * pages would stay in the process's heap. */
    if (save_settings(imp, err) || store_count_rows(st, kind, NULL, &imp->existing, err) ||
        maybe_drop_indexes(imp, expected_rows, err)) {
        store_import_free(imp);
        return err->code;
    }
    *out = imp;
    return ERROR_OK;
}

/* ---- one row ------------------------------------------------------------------ */

/* store_compare_fn: a differing field's bit into the set at ctx. */
static error_code note_differing(size_t i, const char *a, const char *b, void *ctx,
                                 error_info *err)
{
    (void)a, (void)b, (void)err;
    *(unsigned *)ctx |= 1u << i;
    return ERROR_OK;
}

/* The user's fields (KIND_FIELD_CREATE) where `a` and `b` differ, as a
 * kind_field_bit set, compared in the store's column form. */
static error_code differing_fields(const model_object *a, const model_object *b,
                                   unsigned *out, error_info *err)
{
    *out = 0;
    return store_compare_fields(a, b, kind_field_set(a->kind, KIND_FIELD_CREATE), true,
                                note_differing, out, err);
}

/* A row whose id (or local alias) the cache holds as `cached`: equal, nothing to
 * do; different in fields an edit may change, the user's edit. */
static error_code import_existing(store_import *imp, model_object *obj, model_object *cached,
                                  store_import_result *result, error_info *err)
{
    unsigned differ;
    if (kind_validate_row(obj, err) || differing_fields(obj, cached, &differ, err))
        return err->code;
    if (!differ) {
        *result = STORE_IMPORT_UNCHANGED;
        return ERROR_OK;
    }
    unsigned fixed = differ & ~kind_field_set(imp->kind, KIND_FIELD_EDIT);
    if (fixed) {
        char names[128], editable[128];
        return error_set(err, ERROR_INVALID,
                         "%s %s: %s differs from the cached %s and cannot be changed; a %s "
                         "may change %s",
                         kind_get(imp->kind)->noun, model_object_id(cached),
                         kind_field_names(imp->kind, fixed, names, sizeof names),
                         kind_get(imp->kind)->noun, kind_get(imp->kind)->noun,
                         kind_field_names(imp->kind, kind_field_set(imp->kind, KIND_FIELD_EDIT),
                                          editable, sizeof editable));
    }
    model_copy_text(model_object_id_buf(obj), MODEL_ID_MAX + 1, model_object_id(cached));
    if (store_edit(imp->st, obj, differ, NULL, err))
        return err->code;
    *result = STORE_IMPORT_UPDATED;
    return ERROR_OK;
}

/* A rule refused for its natural key: the same rule already (same action and
 * text), or a real conflict (the message store_insert gave stands). */
static bool same_as_key_holder(store_import *imp, const model_object *obj)
{
    model_object holder;
    model_object_init(&holder, MODEL_KIND_RULE);
    error_info ignored;
    unsigned differ = 1;
    if (store_rule_find(imp->st, obj->rule.policy_id, obj->rule.cidr, &holder.rule,
                        &ignored) == ERROR_OK)
        differing_fields(obj, &holder, &differ, &ignored);
    return differ == 0;
}

/* A row the cache does not hold: inserted through the gate, as store_insert. */
static error_code import_new(store_import *imp, model_object *obj, store_import_result *result,
                             error_info *err)
{
    if (maybe_drop_indexes(imp, imp->added + 1, err) || kind_validate_row(obj, err))
        return err->code;
    error_code rc = store_insert_valid(imp->st, obj, err);
    if (rc == ERROR_CONFLICT && kind_get(obj->kind)->traits & KIND_KEYED &&
        same_as_key_holder(imp, obj)) {
        *result = STORE_IMPORT_UNCHANGED;
        return ERROR_OK;
    }
    if (rc != ERROR_OK)
        return rc;
    imp->added++;
    *result = model_object_state(obj) == MODEL_STATE_SYNCED ? STORE_IMPORT_SYNCED
                                                           : STORE_IMPORT_CREATED;
    return ERROR_OK;
}

/* A row about to be inserted: `state`, no error text, and without a remote id
 * no uri either (what every kind has, where the descriptor says it is). */
static void set_new_row(model_object *obj, model_state state)
{
    if (state == MODEL_STATE_NEW)
        obj->head.uri[0] = '\0';
    obj->head.error[0] = '\0';
    obj->head.state = state;
}

/* What the file's id makes of the row: the cached row it names (read into
 * `cached`, initialised here only then), or a new row (synced with the remote's
 * id; new, without one or with another cache's local id). The file's state and
 * error text are not taken. */
static error_code import_identify(store_import *imp, model_object *obj, model_object *cached,
                                  bool *found, error_info *err)
{
    const kind_desc *d = kind_get(imp->kind);
    char *id = model_object_id_buf(obj);
    bool local = validate_is_local_id(id);
    *found = false;
    if (id[0] && !local && validate_id(id, d->id_prefix, "id", err))
        return err->code;
    if (id[0]) {
        /* Most rows of a large import are new: the row is read only once known. */
        char canon[MODEL_ID_MAX + 1];
        model_state state;
        error_code rc = store_row_resolve(imp->st, imp->kind, id, canon, &state, err);
        if (rc == ERROR_OK) {
            model_object_init(cached, imp->kind);
            *found = true;
            return store_get(imp->st, imp->kind, canon, cached, err);
        }
        if (rc != ERROR_NOT_FOUND)
            return rc;
    }
    if (local)
        id[0] = '\0';
    set_new_row(obj, id[0] ? MODEL_STATE_SYNCED : MODEL_STATE_NEW);
    return ERROR_OK;
}

error_code store_import_add(store_import *imp, model_object *obj, store_import_result *result,
                            error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    store_import_result ignored = STORE_IMPORT_UNCHANGED;
    result = result ? result : &ignored;
    if (obj->kind != imp->kind)
        return error_set(err, ERROR_INVALID, "a %s in an import of %s",
                         kind_get(obj->kind)->noun, kind_get(imp->kind)->plural);
    model_object cached;
    bool found;
    error_code rc = import_identify(imp, obj, &cached, &found, err);
    if (rc == ERROR_OK)
        rc = found ? import_existing(imp, obj, &cached, result, err)
                   : import_new(imp, obj, result, err);
    if (found)
        model_object_clear(&cached);
    return rc;
}

error_code store_import_finish(store_import *imp, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    error_code rc = ERROR_OK;
    if (imp->rebuild) {
        rc = store_exec_sql(imp->st, store_sql_rule_indexes(true), err);
        if (rc == ERROR_OK)
            rc = store_exec_sql(imp->st, store_sql_rule_change_triggers(true), err);
        if (rc == ERROR_OK)
            rc = store_change_bump(imp->st, MODEL_KIND_RULE, err);
        if (rc == ERROR_OK)
            imp->st->indexes_dropped = false;
    }
    store_import_free(imp);
    return rc;
}

void store_import_free(store_import *imp)
{
    if (!imp)
        return;
    restore_settings(imp);
    imp->st->import_open = false;
    free(imp);
}
