/*
 * store: bulk import. The rows go through the same gate and the same insert as
 * store_insert; what changes is when the rules table's secondary indexes are built.
 * For a large import into a small table they are dropped and built once at the
 * end (a sort instead of a B-tree insert per row and index), and the natural key
 * they would have enforced is checked in memory meanwhile: a set of 64-bit hashes
 * of (policy id, canonical cidr) of the live rules. A hash already in the set is
 * confirmed by a query before it is called a conflict, so a hash collision costs
 * one table scan and never refuses a good row. The change counter's triggers
 * (migration 9) go with the indexes: the import counts once at its finish instead
 * of once per row.
 */
#include "store_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing, linear probing; 0 marks an empty slot (a zero hash is stored
 * as 1). Kept at most half full. */
typedef struct key_set {
    uint64_t *slots;
    size_t cap; /* a power of two */
    size_t used;
} key_set;

struct store_import {
    store *st;
    model_kind kind;
    bool rebuild;  /* the indexes were dropped: build them at finish */
    key_set keys;  /* live natural keys, only while rebuild */
};

/* FNV-1a over policy id, a separator that cannot occur in either, and cidr. */
static uint64_t key_hash(const char *policy_id, const char *cidr)
{
    uint64_t h = 14695981039346656037u;
    for (const unsigned char *p = (const unsigned char *)policy_id; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    h = (h ^ 0xffu) * 1099511628211u;
    for (const unsigned char *p = (const unsigned char *)cidr; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h ? h : 1;
}

static bool set_grow(key_set *set)
{
    size_t cap = set->cap ? set->cap * 2 : 1024;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < set->cap; i++) {
        if (!set->slots[i])
            continue;
        size_t j = (size_t)set->slots[i] & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = set->slots[i];
    }
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return true;
}

/* Room for one more hash. False when out of memory. */
static bool set_reserve(key_set *set)
{
    return (set->used + 1) * 2 <= set->cap || set_grow(set);
}

/* Add `h`; *seen tells whether it was there already. False when out of memory. */
static bool set_add(key_set *set, uint64_t h, bool *seen)
{
    if (!set_reserve(set))
        return false;
    size_t j = (size_t)h & (set->cap - 1);
    while (set->slots[j] && set->slots[j] != h)
        j = (j + 1) & (set->cap - 1);
    *seen = set->slots[j] == h;
    if (!*seen) {
        set->slots[j] = h;
        set->used++;
    }
    return true;
}

/* The live keys already in the table (few: a rebuild is chosen only when the
 * import is at least as large as the table). */
static error_code seed_keys(store_import *imp, error_info *err)
{
    sqlite3_stmt *s = store_stmt(imp->st, STMT_RULE_LIVE_KEYS, err);
    if (!s)
        return err->code;
    bool row = true, seen;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && (rc = store_step(imp->st, s, &row, err)) == ERROR_OK && row) {
        uint64_t h = key_hash((const char *)sqlite3_column_text(s, 0),
                              (const char *)sqlite3_column_text(s, 1));
        if (!set_add(&imp->keys, h, &seen))
            rc = error_set(err, ERROR_NOMEM, "out of memory");
    }
    store_reset(s);
    return rc;
}

static error_code start_rebuild(store_import *imp, size_t expected_rows, error_info *err)
{
    size_t existing;
    if (store_count_rows(imp->st, imp->kind, NULL, &existing, err))
        return err->code;
    if (imp->kind != MODEL_KIND_RULE || expected_rows < existing)
        return ERROR_OK;
    /* The change counter's triggers too: the import counts once, at its finish. */
    if (store_exec_sql(imp->st, store_sql_rule_indexes(false), err) ||
        store_exec_sql(imp->st, store_sql_rule_change_triggers(false), err))
        return err->code;
    imp->st->indexes_dropped = true;
    imp->rebuild = true;
    return seed_keys(imp, err);
}

error_code store_import_begin(store *st, model_kind kind, size_t expected_rows,
                              store_import **out, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
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
    if (start_rebuild(imp, expected_rows, err)) {
        store_import_free(imp);
        return err->code;
    }
    *out = imp;
    return ERROR_OK;
}

/* The in-memory stand-in for rules_live_key: refuse a key a live rule holds. */
static error_code check_key(store_import *imp, const model_rule *rule, uint64_t h,
                            error_info *err)
{
    size_t j = (size_t)h & (imp->keys.cap - 1);
    while (imp->keys.slots[j] && imp->keys.slots[j] != h)
        j = (j + 1) & (imp->keys.cap - 1);
    if (imp->keys.slots[j] != h)
        return ERROR_OK;
    /* Seen before, or a collision: the table decides (a scan, as there is no
     * index now; only on this rare path). */
    sqlite3_stmt *s = store_stmt(imp->st, STMT_RULE_LIVE_ID, err);
    const char *args[] = {rule->policy_id, rule->cidr};
    bool found;
    if (!s || store_bind_texts(imp->st, s, args, 2, err) || store_step(imp->st, s, &found, err))
        return err->code;
    char other[MODEL_ID_MAX + 1] = "";
    if (found)
        store_col_copy(s, 0, other, sizeof other);
    store_reset(s);
    if (!found)
        return ERROR_OK;
    return error_set(err, ERROR_CONFLICT, "policy %s already has a rule for %s (%s)",
                     rule->policy_id, rule->cidr, other);
}

static error_code add_rebuilding(store_import *imp, model_object *obj, error_info *err)
{
    const model_rule *rule = &obj->rule;
    bool live = store_state_is_live(rule->state);
    uint64_t h = key_hash(rule->policy_id, rule->cidr);
    if (live && imp->keys.cap && check_key(imp, rule, h, err))
        return err->code;
    /* The set grows before the insert, so a row is never stored without its key. */
    if (live && !set_reserve(&imp->keys))
        return error_set(err, ERROR_NOMEM, "out of memory");
    if (store_insert_valid(imp->st, obj, err))
        return err->code;
    bool seen;
    if (live)
        set_add(&imp->keys, h, &seen); /* room was reserved: cannot fail */
    return ERROR_OK;
}

error_code store_import_add(store_import *imp, model_object *obj, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    if (obj->kind != imp->kind)
        return error_set(err, ERROR_INVALID, "a %s in an import of %s",
                         kind_get(obj->kind)->noun, kind_get(imp->kind)->plural);
    if (!imp->rebuild)
        return store_insert(imp->st, obj, err);
    char given_cidr[MODEL_CIDR_MAX + 1];
    memcpy(given_cidr, obj->rule.cidr, sizeof given_cidr);
    if (kind_validate_row(obj, err))
        return err->code;
    error_code rc = add_rebuilding(imp, obj, err);
    if (rc != ERROR_OK)
        memcpy(obj->rule.cidr, given_cidr, sizeof given_cidr);
    return rc;
}

error_code store_import_finish(store_import *imp, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    error_code rc = ERROR_OK;
    if (imp->rebuild) {
        /* The sorter may use a second core for the index builds. */
        rc = store_exec_sql(imp->st, "PRAGMA threads = 2", err);
        if (rc == ERROR_OK)
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
    imp->st->import_open = false;
    free(imp->keys.slots);
    free(imp);
}
