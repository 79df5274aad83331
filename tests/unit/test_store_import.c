/* Import: the list splitter (codec_split_*) over input read in chunks, and the
 * store's bulk import (store_import_*): rows matched with the cache (unchanged,
 * updated, created, synced), the same gate and messages as store_insert, the
 * rules' browsing indexes dropped and built again for a large import, the
 * transaction rules around it, and the round trip of what export writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/kind.h"
#include "rampart/store.h"
#include "test_support.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-import-XXXXXX", "rampart.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

/* How many of the rules table's two secondary indexes the file has (another
 * connection: what a reader would see once committed). */
static int rule_indexes(const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*) FROM sqlite_master WHERE type = "
                                        "'index' AND name IN ('rules_policy_id', "
                                        "'rules_live_key')",
                                        -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
}

static size_t rule_count(store *st)
{
    size_t n = 0;
    error_info err;
    assert_int_equal(store_count(st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    return n;
}

static error_code add_as(store_import *imp, const char *cidr, model_action action,
                         store_import_result *result, error_info *err)
{
    model_object o = ts_rule(POLICY, cidr, action, MODEL_STATE_NEW);
    return store_import_add(imp, &o, result, err);
}

static error_code add(store_import *imp, const char *cidr, error_info *err)
{
    return add_as(imp, cidr, MODEL_ACTION_ALLOW, NULL, err);
}

/* Large enough for the browsing indexes to be dropped from the start. */
enum { BIG = 100000 };

/* The rebuilding path: into an empty table, keys checked in memory, refusals as
 * store_insert gives them, the indexes back at finish. */
static void test_import_rebuilds_indexes(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, BIG, &imp, &err), ERROR_OK);
    char cidr[32];
    for (int i = 0; i < 300; i++) {
        snprintf(cidr, sizeof cidr, "10.0.%d.%d/32", i / 256, i % 256);
        assert_int_equal(add(imp, cidr, &err), ERROR_OK);
    }
    /* The key of a row of this import, in another spelling: the same rule again is
     * left alone; another action for it is refused by the natural key's index. */
    store_import_result result;
    assert_int_equal(add(imp, "2001:DB8::/32", &err), ERROR_OK);
    assert_int_equal(add_as(imp, "2001:db8::/32", MODEL_ACTION_ALLOW, &result, &err), ERROR_OK);
    assert_int_equal(result, STORE_IMPORT_UNCHANGED);
    assert_int_equal(add_as(imp, "2001:db8::/32", MODEL_ACTION_DENY, &result, &err),
                     ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, "already has a rule for 2001:db8::/32"));
    /* A bad row: the gate's message, nothing stored, the import goes on. */
    assert_int_equal(add(imp, "10.0.0.1/8", &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "did you mean 10.0.0.0/8"));
    assert_int_equal(add(imp, "10.9.0.0/16", &err), ERROR_OK);
    /* The table has no secondary index now: no commit until the import is done. */
    assert_int_equal(store_commit(d->st, &err), ERROR_STATE);
    assert_int_equal(store_begin(d->st, &err), ERROR_STATE);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    assert_int_equal(rule_count(d->st), 302);
    assert_int_equal(rule_indexes(d->path), 2);
    model_rule found;
    assert_int_equal(store_rule_find(d->st, POLICY, "2001:DB8::/32", &found, &err), ERROR_OK);
}

/* A rollback brings the dropped indexes back and keeps nothing of the import. */
static void test_import_rollback_restores(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 10, &imp, &err), ERROR_OK);
    assert_int_equal(add(imp, "10.0.0.0/8", &err), ERROR_OK);
    store_import_free(imp);
    store_rollback(d->st);
    assert_int_equal(rule_count(d->st), 0);
    assert_int_equal(rule_indexes(d->path), 2);
    /* And the handle takes a new import and a plain insert after it. */
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 10, &imp, &err), ERROR_OK);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    ts_insert_rule(d->st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
}

/* A table larger than the import keeps its indexes: the unique key refuses, with
 * the same message, a key a row already in the table holds. */
static void test_import_into_larger_table(void **state)
{
    ts_store_dir *d = *state;
    char first[MODEL_ID_MAX + 1];
    ts_insert_rule(d->st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_SYNCED, first);
    ts_insert_rule(d->st, POLICY, "10.1.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 1, &imp, &err), ERROR_OK);
    assert_int_equal(add_as(imp, "10.0.0.0/8", MODEL_ACTION_DENY, NULL, &err), ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, first));
    assert_int_equal(add(imp, "10.2.0.0/16", &err), ERROR_OK);
    /* Nothing dropped: the commit is not held back. */
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    assert_int_equal(rule_count(d->st), 3);
}

/* The same conflict with the table's rows when the browsing indexes were dropped:
 * the natural key's index stays. */
static void test_import_keeps_natural_key(void **state)
{
    ts_store_dir *d = *state;
    char first[MODEL_ID_MAX + 1];
    ts_insert_rule(d->st, POLICY, "10.0.0.0/8", MODEL_ACTION_DENY, MODEL_STATE_SYNCED, first);
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, BIG, &imp, &err), ERROR_OK);
    assert_int_equal(add(imp, "10.0.0.0/8", &err), ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, first));
    store_import_result result;
    assert_int_equal(add_as(imp, "10.0.0.0/8", MODEL_ACTION_DENY, &result, &err), ERROR_OK);
    assert_int_equal(result, STORE_IMPORT_UNCHANGED);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    assert_int_equal(rule_count(d->st), 1);
}

static void test_import_needs_transaction(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    store_import *imp = NULL;
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 10, &imp, &err), ERROR_STATE);
    assert_null(imp);
    assert_non_null(strstr(err.msg, "transaction"));
    /* A credential in a rules import is refused. */
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 0, &imp, &err), ERROR_OK);
    model_object c;
    ts_cred_init(&c, "web", "", NULL);
    assert_int_equal(store_import_add(imp, &c, NULL, &err), ERROR_INVALID);
    model_object_clear(&c);
    store_import *second;
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 0, &second, &err),
                     ERROR_STATE);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_import_rebuilds_indexes),
        T(test_import_rollback_restores),
        T(test_import_into_larger_table),
        T(test_import_keeps_natural_key),
        T(test_import_needs_transaction),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
