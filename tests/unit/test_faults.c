#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rampart/emulator.h"

/* ---- parser: accepted specs ---- */

static void test_empty_spec_is_no_fault(void **state)
{
    (void)state;
    emulator_faults f;
    error_info e = {0};
    assert_int_equal(emulator_faults_parse(NULL, &f, &e), ERROR_OK);
    assert_int_equal(f.count, 0);
    assert_int_equal(emulator_faults_parse("", &f, &e), ERROR_OK);
    assert_int_equal(f.count, 0);
    assert_null(emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE));
}

static void test_every_kind(void **state)
{
    (void)state;
    emulator_faults f;
    error_info e = {0};
    const char *spec = "create_rule:drop@2,create_cred:truncate@1,list_rules:500@3,"
                       "any:429@1:retry-after=2,delete_rule:reset@1-2,"
                       "list_creds:delay=300@1,get_rule:502@4+,get_cred:429@every=3";
    assert_int_equal(emulator_faults_parse(spec, &f, &e), ERROR_OK);
    assert_int_equal(f.count, 8);

    assert_int_equal(f.items[0].op, EMULATOR_OP_CREATE_RULE);
    assert_int_equal(f.items[0].kind, EMULATOR_FAULT_DROP);
    assert_int_equal(f.items[0].select, EMULATOR_SELECT_RANGE);
    assert_int_equal(f.items[0].first, 2);
    assert_int_equal(f.items[0].last, 2);

    assert_int_equal(f.items[1].kind, EMULATOR_FAULT_TRUNCATE);
    assert_int_equal(f.items[2].kind, EMULATOR_FAULT_STATUS);
    assert_int_equal(f.items[2].status, 500);

    assert_int_equal(f.items[3].op, EMULATOR_OP_ANY);
    assert_int_equal(f.items[3].status, 429);
    assert_int_equal(f.items[3].retry_after, 2);

    assert_int_equal(f.items[4].kind, EMULATOR_FAULT_RESET);
    assert_int_equal(f.items[4].first, 1);
    assert_int_equal(f.items[4].last, 2);

    assert_int_equal(f.items[5].kind, EMULATOR_FAULT_DELAY);
    assert_int_equal(f.items[5].delay_ms, 300);

    assert_int_equal(f.items[6].status, 502);
    assert_int_equal(f.items[6].first, 4);
    assert_int_equal(f.items[6].last, 0);
    assert_int_equal(f.items[6].retry_after, -1);

    assert_int_equal(f.items[7].select, EMULATOR_SELECT_EVERY);
    assert_int_equal(f.items[7].every, 3);
    assert_int_equal(f.items[7].retry_after, -1); /* 429 without the option: no header */
}

static void test_op_names_round_trip(void **state)
{
    (void)state;
    for (int op = 0; op < EMULATOR_OP_COUNT; op++) {
        char spec[64];
        snprintf(spec, sizeof spec, "%s:500@1", emulator_op_name((emulator_op)op));
        emulator_faults f;
        error_info e = {0};
        assert_int_equal(emulator_faults_parse(spec, &f, &e), ERROR_OK);
        assert_int_equal(f.items[0].op, op);
    }
}

static void test_limits_accepted(void **state)
{
    (void)state;
    emulator_faults f;
    error_info e = {0};
    assert_int_equal(emulator_faults_parse("any:delay=60000@1", &f, &e), ERROR_OK);
    assert_int_equal(f.items[0].delay_ms, 60000);
    assert_int_equal(emulator_faults_parse("any:429@1:retry-after=0", &f, &e), ERROR_OK);
    assert_int_equal(f.items[0].retry_after, 0);
    assert_int_equal(emulator_faults_parse("any:429@1:retry-after=86400", &f, &e), ERROR_OK);
    assert_int_equal(emulator_faults_parse("any:drop@5-5", &f, &e), ERROR_OK);
}

/* ---- parser: refused specs, each message naming the bad part ---- */

typedef struct bad_case {
    const char *spec;
    const char *want; /* substrings of the message */
    const char *want2;
} bad_case;

static const bad_case bad_cases[] = {
    {"create_rules:drop@1", "entry 1 'create_rules:drop@1'", "unknown operation 'create_rules'"},
    {"create_rule:dorp@2", "unknown kind 'dorp'", "drop, reset, truncate"},
    {"create_rule:drop", "missing the selection", "@N"},
    {"create_rule", "expected OP:KIND@SELECT", NULL},
    {"create_rule:drop@0", "bad selection '@0'", NULL},
    {"create_rule:drop@3-2", "bad selection '@3-2'", NULL},
    {"create_rule:drop@x", "bad selection '@x'", NULL},
    {"create_rule:drop@", "bad selection", NULL},
    {"create_rule:drop@+", "bad selection '@+'", NULL},
    {"create_rule:drop@every=0", "bad selection '@every=0'", NULL},
    {"create_rule:drop@01", "bad selection '@01'", NULL},
    {"create_rule:drop@-1", "bad selection", NULL},
    {"any:500@1:retry-after=2", "retry-after goes only with 429", NULL},
    {"any:429@1:retry-after=2:retry-after=3", "retry-after given twice", NULL},
    {"any:429@1:retry-after=x", "retry-after 'x'", "0 to 86400"},
    {"any:429@1:retry-after=86401", "retry-after '86401'", NULL},
    {"any:429@1:wait=2", "unknown option 'wait=2'", NULL},
    {"any:delay=0@1", "delay '0'", "1 to 60000"},
    {"any:delay=60001@1", "delay '60001'", NULL},
    {"any:delay=@1", "delay ''", NULL},
    {"any:drop@1,", "entry 2", "empty"},
    {",any:drop@1", "entry 1", "empty"},
    {"any:drop@1,,any:reset@2", "entry 2", "empty"},
    {"any:drop@1,get_rule:503@2", "entry 2 'get_rule:503@2'", "unknown kind '503'"},
};

static void test_bad_specs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        emulator_faults f;
        error_info e = {0};
        error_code rc = emulator_faults_parse(c->spec, &f, &e);
        if (rc != ERROR_INVALID || !strstr(e.msg, c->want) ||
            (c->want2 && !strstr(e.msg, c->want2)))
            fail_msg("spec '%s': got %d '%s', want '%s'", c->spec, rc, e.msg, c->want);
        assert_int_equal(f.count, 0); /* nothing half-parsed survives */
    }
}

static void test_too_many_and_too_long(void **state)
{
    (void)state;
    char spec[2048] = "";
    for (int i = 0; i < EMULATOR_FAULTS_MAX + 1; i++)
        strcat(spec, i ? ",any:drop@1" : "any:drop@1");
    emulator_faults f;
    error_info e = {0};
    assert_int_equal(emulator_faults_parse(spec, &f, &e), ERROR_INVALID);
    assert_non_null(strstr(e.msg, "more than 32 entries"));

    char longer[400] = "any:drop@1";
    for (int i = 0; i < 30; i++)
        strcat(longer, "0000000000");
    assert_int_equal(emulator_faults_parse(longer, &f, &e), ERROR_INVALID);
    assert_non_null(strstr(e.msg, "too long"));
}

/* ---- selection engine ---- */

static void test_nth_request_of_its_operation(void **state)
{
    (void)state;
    emulator_faults f;
    assert_int_equal(emulator_faults_parse("create_rule:drop@2", &f, NULL), ERROR_OK);
    assert_null(emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE));
    assert_null(emulator_faults_next(&f, EMULATOR_OP_LIST_RULES)); /* not counted for it */
    assert_null(emulator_faults_next(&f, EMULATOR_OP_CREATE_CRED));
    const emulator_fault *hit = emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE);
    assert_non_null(hit);
    assert_int_equal(hit->kind, EMULATOR_FAULT_DROP);
    assert_null(emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE));
    assert_int_equal(f.seen[EMULATOR_OP_CREATE_RULE], 3);
    assert_int_equal(f.seen[EMULATOR_OP_ANY], 5);
}

static void test_ranges_and_every(void **state)
{
    (void)state;
    emulator_faults f;
    assert_int_equal(emulator_faults_parse("get_rule:500@2-3,get_cred:502@3+,"
                                           "list_rules:429@every=2",
                                           &f, NULL),
                     ERROR_OK);
    const int want_get_rule[] = {0, 1, 1, 0, 0};
    const int want_get_cred[] = {0, 0, 1, 1, 1};
    const int want_list[] = {0, 1, 0, 1, 0};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(emulator_faults_next(&f, EMULATOR_OP_GET_RULE) != NULL,
                         want_get_rule[i]);
        assert_int_equal(emulator_faults_next(&f, EMULATOR_OP_GET_CRED) != NULL,
                         want_get_cred[i]);
        assert_int_equal(emulator_faults_next(&f, EMULATOR_OP_LIST_RULES) != NULL,
                         want_list[i]);
    }
}

static void test_any_counts_every_operation(void **state)
{
    (void)state;
    emulator_faults f;
    assert_int_equal(emulator_faults_parse("any:429@3", &f, NULL), ERROR_OK);
    assert_null(emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE));
    assert_null(emulator_faults_next(&f, EMULATOR_OP_GET_CRED));
    const emulator_fault *hit = emulator_faults_next(&f, EMULATOR_OP_DELETE_RULE);
    assert_non_null(hit);
    assert_int_equal(hit->status, 429);
    assert_null(emulator_faults_next(&f, EMULATOR_OP_DELETE_RULE));
}

static void test_first_entry_wins(void **state)
{
    (void)state;
    emulator_faults f;
    assert_int_equal(emulator_faults_parse("create_rule:reset@1,any:500@1+", &f, NULL),
                     ERROR_OK);
    const emulator_fault *hit = emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE);
    assert_non_null(hit);
    assert_int_equal(hit->kind, EMULATOR_FAULT_RESET);
    hit = emulator_faults_next(&f, EMULATOR_OP_CREATE_RULE);
    assert_non_null(hit);
    assert_int_equal(hit->status, 500);
}

static void test_any_is_not_an_operation_to_count(void **state)
{
    (void)state;
    emulator_faults f;
    assert_int_equal(emulator_faults_parse("any:500@1+", &f, NULL), ERROR_OK);
    assert_null(emulator_faults_next(&f, EMULATOR_OP_ANY));
    assert_null(emulator_faults_next(&f, EMULATOR_OP_COUNT));
    assert_int_equal(f.seen[EMULATOR_OP_ANY], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_spec_is_no_fault),
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_op_names_round_trip),
        cmocka_unit_test(test_limits_accepted),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_too_many_and_too_long),
        cmocka_unit_test(test_nth_request_of_its_operation),
        cmocka_unit_test(test_ranges_and_every),
        cmocka_unit_test(test_any_counts_every_operation),
        cmocka_unit_test(test_first_entry_wins),
        cmocka_unit_test(test_any_is_not_an_operation_to_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
