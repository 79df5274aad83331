/* store: values for shell completion (store_complete) over a real database file:
 * ids, policy ids and cidrs by prefix, the limit, and query plans that never walk a
 * whole table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/store.h"
#include "test_support.h"
#include "../../src/core/store/store_internal.h"

typedef ts_store_dir fixture;

enum { GOT_MAX = 64 };

/* What a completion handed over, joined by spaces. */
typedef struct got {
    char text[4096];
    size_t n;
} got;

static error_code collect(void *ctx, const char *value, error_info *err)
{
    (void)err;
    got *g = ctx;
    size_t len = strlen(g->text);
    snprintf(g->text + len, sizeof g->text - len, "%s%s", g->n++ ? " " : "", value);
    return ERROR_OK;
}

static const char *complete(store *st, store_complete_what what, const char *prefix,
                            const char *policy, size_t max, got *g)
{
    memset(g, 0, sizeof *g);
    error_info err;
    assert_int_equal(store_complete(st, what, prefix, policy, max, collect, g, &err), ERROR_OK);
    return g->text;
}

static const char *const cidrs[] = {
    "10.0.0.0/8",   "10.1.0.0/16",    "10.1.2.0/24",  "10.12.0.0/16",  "10.100.0.0/16",
    "10.2.0.0/16",  "101.0.0.0/8",    "1.2.3.4/32",   "2.0.0.0/8",     "9.0.0.0/8",
    "2001:db8::/32", "2001:db8:1::/48", "2001:db8:a::/48", "2001:db9::/32", "::1/128",
    "::ffff:10.1.2.3/128", "2a00::/16", "fe80::/10",
};

static int setup(void **state)
{
    ts_store_dir_setup(state, "/tmp/rampart-complete.XXXXXX", "cache.db");
    fixture *f = *state;
    for (size_t i = 0; i < sizeof cidrs / sizeof cidrs[0]; i++) {
        ts_insert_rule(f->st, i % 2 ? "ipp_b" : "ipp_a", cidrs[i], MODEL_ACTION_ALLOW,
                       MODEL_STATE_SYNCED, NULL);
    }
    /* The same cidr in another policy: offered once. */
    ts_insert_rule(f->st, "ipp_c", "10.1.0.0/16", MODEL_ACTION_DENY, MODEL_STATE_NEW, NULL);
    ts_insert_rule(f->st, "ipp_zz", "10.3.0.0/16", MODEL_ACTION_DENY,
                   MODEL_STATE_NEW, NULL);
    return 0;
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

static void cidrs_by_text_prefix_in_address_order(void **state)
{
    fixture *f = *state;
    got g;
    /* "10.1" is 10.1.x, 10.10-19.x and 10.100-199.x; never 101.x or 10.2.x. */
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "10.1", NULL, 50, &g),
                        "10.1.0.0/16 10.1.2.0/24 10.12.0.0/16 10.100.0.0/16");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "10.1.", NULL, 50, &g),
                        "10.1.0.0/16 10.1.2.0/24");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "10.0.0.0/", NULL, 50, &g),
                        "10.0.0.0/8");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "1", NULL, 50, &g),
                        "1.2.3.4/32 10.0.0.0/8 10.1.0.0/16 10.1.2.0/24 10.2.0.0/16 "
                        "10.3.0.0/16 10.12.0.0/16 10.100.0.0/16 101.0.0.0/8");
    /* Digits alone may be either family. */
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "2", NULL, 50, &g),
                        "2.0.0.0/8 2001:db8::/32 2001:db8:1::/48 2001:db8:a::/48 "
                        "2001:db9::/32 2a00::/16");
    /* IPv6, typed in any case; "::" stands for at least two zero groups. */
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "2001:DB8:", NULL, 50, &g),
                        "2001:db8::/32 2001:db8:1::/48 2001:db8:a::/48");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "2001:db8::", NULL, 50, &g),
                        "2001:db8::/32");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "::", NULL, 50, &g),
                        "::1/128 ::ffff:10.1.2.3/128");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "::ffff:10", NULL, 50, &g),
                        "::ffff:10.1.2.3/128");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "fe", NULL, 50, &g),
                        "fe80::/10");
    /* Nothing matches: no row, no error. */
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "300", NULL, 50, &g), "");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "010", NULL, 50, &g), "");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "x", NULL, 50, &g), "");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "1.2.3.4.5", NULL, 50, &g), "");
}

static void cidrs_of_one_policy(void **state)
{
    fixture *f = *state;
    got g;
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "10.", "ipp_a", 50, &g),
                        "10.0.0.0/8 10.1.2.0/24 10.100.0.0/16");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "10.1", "ipp_c", 50, &g),
                        "10.1.0.0/16");
    assert_string_equal(complete(f->st, STORE_COMPLETE_CIDR, "", "ipp_none", 50, &g), "");
}

static void ids_and_policies_by_prefix_with_a_limit(void **state)
{
    fixture *f = *state;
    got g;
    assert_string_equal(complete(f->st, STORE_COMPLETE_POLICY_ID, "", NULL, 50, &g),
                        "ipp_a ipp_b ipp_c ipp_zz");
    assert_string_equal(complete(f->st, STORE_COMPLETE_POLICY_ID, "ipp_z", NULL, 50, &g),
                        "ipp_zz");
    assert_string_equal(complete(f->st, STORE_COMPLETE_POLICY_ID, "ipp_b", NULL, 50, &g),
                        "ipp_b");
    assert_string_equal(complete(f->st, STORE_COMPLETE_POLICY_ID, "ipp", NULL, 2, &g),
                        "ipp_a ipp_b");
    complete(f->st, STORE_COMPLETE_RULE_ID, "local_", NULL, 5, &g);
    assert_int_equal(g.n, 5);
    complete(f->st, STORE_COMPLETE_RULE_ID, "", NULL, 500, &g);
    assert_int_equal(g.n, sizeof cidrs / sizeof cidrs[0] + 2);
    assert_string_equal(complete(f->st, STORE_COMPLETE_RULE_ID, "ipr_", NULL, 50, &g), "");
    /* A credential's id, by its first characters. */
    model_object c;
    char id[MODEL_ID_MAX + 1];
    ts_cred_init(&c, "web", "", NULL);
    ts_insert(f->st, &c, id);
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%.12s", id);
    assert_string_equal(complete(f->st, STORE_COMPLETE_CRED_ID, prefix, NULL, 50, &g), id);
    assert_string_equal(complete(f->st, STORE_COMPLETE_CRED_ID, "local_\xff", NULL, 50, &g),
                        "");
    /* Longer than any value: nothing, at once. */
    char long_prefix[300];
    memset(long_prefix, 'a', sizeof long_prefix - 1);
    long_prefix[sizeof long_prefix - 1] = '\0';
    assert_string_equal(complete(f->st, STORE_COMPLETE_RULE_ID, long_prefix, NULL, 50, &g), "");
}

/* Every query seeks an index range: none walks a table. */
static void plans_are_index_ranges(void **state)
{
    fixture *f = *state;
    static const struct {
        store_complete_what what;
        bool bounded, inclusive;
        const char *index;
    } cases[] = {
        {STORE_COMPLETE_RULE_ID, true, false, "PRIMARY KEY (id>? AND id<?)"},
        {STORE_COMPLETE_RULE_ID, false, false, "PRIMARY KEY (id>?)"},
        {STORE_COMPLETE_CRED_ID, true, false, "sqlite_autoindex_credentials_1 (id>? AND id<?)"},
        {STORE_COMPLETE_POLICY_ID, false, true, "rules_policy_id"},
        {STORE_COMPLETE_POLICY_ID, false, false, "rules_policy_id"},
        {STORE_COMPLETE_CIDR, false, false, "rules_cidr_key (cidr_key>? AND cidr_key<?)"},
        {STORE_COMPLETE_CIDR, true, true, "rules_live_key (policy_id=? AND cidr>? AND cidr<?)"},
        {STORE_COMPLETE_CIDR, false, true, "rules_live_key (policy_id=? AND cidr>?)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char plan[512];
        error_info err;
        assert_int_equal(store_complete_plan(f->st, cases[i].what, cases[i].bounded,
                                             cases[i].inclusive, plan, sizeof plan, &err),
                         ERROR_OK);
        if (!strstr(plan, cases[i].index) || strstr(plan, "SCAN"))
            fail_msg("case %zu: %s", i, plan);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cidrs_by_text_prefix_in_address_order, setup, teardown),
        cmocka_unit_test_setup_teardown(cidrs_of_one_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(ids_and_policies_by_prefix_with_a_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(plans_are_index_ranges, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
