/* store: the small lookups of store_lookup.c (policy ids, credentials by name,
 * data_version) over real database files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/store.h"
#include "test_support.h"

typedef ts_store_dir fixture;

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-lookup.XXXXXX", "cache.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

static void add_rule(store *st, const char *policy, const char *cidr, model_state state)
{
    ts_insert_rule(st, policy, cidr, MODEL_ACTION_ALLOW, state, NULL);
}

static void add_cred(store *st, const char *description, model_state state, char *id_out)
{
    model_object c;
    ts_cred_init(&c, description, "", NULL);
    c.cred.state = state;
    ts_insert(st, &c, id_out);
}

static void policy_ids_in_order_and_paged(void **state)
{
    fixture *f = *state;
    add_rule(f->st, "ipp_b", "10.0.0.0/8", MODEL_STATE_NEW);
    add_rule(f->st, "ipp_a", "10.0.0.0/8", MODEL_STATE_SYNCED);
    add_rule(f->st, "ipp_b", "10.1.0.0/16", MODEL_STATE_NEW);
    add_rule(f->st, "ipp_c", "::/0", MODEL_STATE_DELETING);
    char ids[2][MODEL_ID_MAX + 1];
    size_t n = 99;
    error_info err;
    assert_int_equal(store_policy_ids(f->st, NULL, ids, 2, &n, &err), ERROR_OK);
    assert_int_equal(n, 2);
    assert_string_equal(ids[0], "ipp_a");
    assert_string_equal(ids[1], "ipp_b");
    assert_int_equal(store_policy_ids(f->st, ids[1], ids, 2, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(ids[0], "ipp_c");
    assert_int_equal(store_policy_ids(f->st, "ipp_c", ids, 2, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
}

static void policy_ids_of_an_empty_cache(void **state)
{
    fixture *f = *state;
    char ids[4][MODEL_ID_MAX + 1];
    size_t n = 99;
    assert_int_equal(store_policy_ids(f->st, "", ids, 4, &n, NULL), ERROR_OK);
    assert_int_equal(n, 0);
}

/* The picker's list: each policy with how many rules it holds (any state), in
 * order, paged with the last id, at most `max`. */
static void policy_counts_in_order_and_paged(void **state)
{
    fixture *f = *state;
    add_rule(f->st, "ipp_b", "10.0.0.0/8", MODEL_STATE_NEW);
    add_rule(f->st, "ipp_a", "10.0.0.0/8", MODEL_STATE_SYNCED);
    add_rule(f->st, "ipp_b", "10.1.0.0/16", MODEL_STATE_NEW);
    add_rule(f->st, "ipp_b", "10.2.0.0/16", MODEL_STATE_FAILED);
    add_rule(f->st, "ipp_c", "::/0", MODEL_STATE_DELETING);
    store_policy_count pc[2];
    size_t n = 99;
    error_info err;
    assert_int_equal(store_policy_counts(f->st, NULL, pc, 2, &n, &err), ERROR_OK);
    assert_int_equal(n, 2);
    assert_string_equal(pc[0].id, "ipp_a");
    assert_int_equal(pc[0].rules, 1);
    assert_string_equal(pc[1].id, "ipp_b");
    assert_int_equal(pc[1].rules, 3);
    assert_int_equal(store_policy_counts(f->st, pc[1].id, pc, 2, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(pc[0].id, "ipp_c");
    assert_int_equal(pc[0].rules, 1);
    assert_int_equal(store_policy_counts(f->st, "ipp_c", pc, 2, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
    assert_int_equal(store_policy_counts(f->st, "", pc, 0, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
}

static void cred_by_name_counts_live_rows_only(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    add_cred(f->st, "web-1", MODEL_STATE_SYNCED, a);
    add_cred(f->st, "web-2", MODEL_STATE_NEW, NULL);
    add_cred(f->st, "web-1", MODEL_STATE_NEW, b);
    add_cred(f->st, "web-1", MODEL_STATE_REMOTE_DELETED, NULL);
    char ids[1][MODEL_ID_MAX + 1];
    size_t n = 0;
    error_info err;
    assert_int_equal(store_cred_find_by_name(f->st, "web-1", ids, 1, &n, &err), ERROR_OK);
    assert_int_equal(n, 2); /* more than max: the caller knows the name is ambiguous */
    assert_string_equal(ids[0], strcmp(a, b) < 0 ? a : b);
    assert_int_equal(store_cred_find_by_name(f->st, "web-2", ids, 1, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
    assert_int_equal(store_cred_find_by_name(f->st, "WEB-2", ids, 1, &n, &err), ERROR_OK);
    assert_int_equal(n, 0); /* exact match: names are what agents were configured with */
}

static void data_version_moves_on_another_connections_commit(void **state)
{
    fixture *f = *state;
    store *reader = NULL;
    error_info err;
    assert_int_equal(store_open(f->path, STORE_READONLY, &reader, &err), ERROR_OK);
    long long v1 = 0, v2 = 0, v3 = 0;
    assert_int_equal(store_data_version(reader, &v1, &err), ERROR_OK);
    assert_int_equal(store_data_version(reader, &v2, &err), ERROR_OK);
    assert_true(v1 == v2);
    add_rule(f->st, "ipp_a", "192.0.2.0/24", MODEL_STATE_NEW);
    assert_int_equal(store_data_version(reader, &v3, &err), ERROR_OK);
    assert_true(v3 != v2);
    store_close(reader);
}

/* A fact the cache keeps survives its handle; bad keys and values are refused. */
static void meta_survives_reopen(void **state)
{
    fixture *f = *state;
    char value[64];
    error_info err;
    assert_int_equal(store_meta_get(f->st, STORE_META_LAST_SYNC, value, sizeof value, &err),
                     ERROR_NOT_FOUND);
    assert_string_equal(value, "");
    assert_int_equal(store_meta_set(f->st, STORE_META_LAST_SYNC, "2026-11-25T10:00:00Z", &err),
                     ERROR_OK);
    assert_int_equal(store_meta_set(f->st, STORE_META_LAST_SYNC, "2026-11-25T11:00:00Z", &err),
                     ERROR_OK);
    store_close(f->st);
    f->st = ts_store_open(f->path);
    assert_int_equal(store_meta_get(f->st, STORE_META_LAST_SYNC, value, sizeof value, &err),
                     ERROR_OK);
    assert_string_equal(value, "2026-11-25T11:00:00Z");
    assert_int_equal(store_meta_set(f->st, "", "x", &err), ERROR_INVALID);
    char big[STORE_META_VALUE_MAX + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(store_meta_set(f->st, "k", big, &err), ERROR_INVALID);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(policy_ids_in_order_and_paged),
        T(policy_ids_of_an_empty_cache),
        T(policy_counts_in_order_and_paged),
        T(cred_by_name_counts_live_rows_only),
        T(data_version_moves_on_another_connections_commit),
        T(meta_survives_reopen),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
