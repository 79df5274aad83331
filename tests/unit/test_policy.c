/* policy: decisions from the prefix index (tables of cases, readers on many
 * threads), address parsing, and loading from a store. The differential test
 * against a plain scan of the rules is in test_policy_diff.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/policy.h"
#include "test_support.h"

#define A MODEL_ACTION_ALLOW
#define D MODEL_ACTION_DENY

struct trule {
    const char *policy;
    const char *cidr;
    model_action action;
    const char *id;
};

static const struct trule table_rules[] = {
    /* overlapping allow and deny, both ways round, both families */
    {"ipp_A", "10.0.0.0/8", A, "ipr_a1"},
    {"ipp_A", "10.1.2.3/32", D, "ipr_d1"},
    {"ipp_A", "10.1.0.0/16", A, "ipr_a5"},
    {"ipp_A", "192.168.0.0/16", D, "ipr_d2"},
    {"ipp_A", "192.168.1.7/32", A, "ipr_a2"},
    {"ipp_A", "2001:db8::/32", A, "ipr_a3"},
    {"ipp_A", "2001:db8:dead::/48", D, "ipr_d3"},
    {"ipp_A", "2001:db8:dead:beef::1/128", A, "ipr_a4"},
    /* /0 rules */
    {"ipp_B", "0.0.0.0/0", A, "ipr_b1"},
    {"ipp_B", "203.0.113.9/32", D, "ipr_b3"},
    {"ipp_B", "::/0", A, "ipr_b4"},
    /* the same cidr with both actions: deny wins */
    {"ipp_C", "198.51.100.0/24", A, "ipr_c1"},
    {"ipp_C", "198.51.100.0/24", D, "ipr_c2"},
    /* deny only */
    {"ipp_D", "::/0", D, "ipr_d9"},
    /* host routes */
    {"ipp_E", "127.0.0.1/32", A, "ipr_e1"},
    {"ipp_E", "::1/128", A, "ipr_e2"},
    /* deny /8, allow /0 under it; a second deny deeper: the deepest deny speaks */
    {"ipp_F", "0.0.0.0/0", A, "ipr_f1"},
    {"ipp_F", "10.0.0.0/8", D, "ipr_f2"},
    {"ipp_F", "10.9.0.0/16", D, "ipr_f3"},
    {"ipp_F", "10.9.9.0/24", A, "ipr_f4"},
};

struct tcase {
    const char *policy;
    const char *ip;
    bool known;
    bool allowed;
    const char *rule; /* "" none */
};

static const struct tcase table_cases[] = {
    {"ipp_A", "10.9.9.9", true, true, "ipr_a1"},
    {"ipp_A", "10.1.9.9", true, true, "ipr_a5"},
    {"ipp_A", "10.1.2.3", true, false, "ipr_d1"},
    {"ipp_A", "10.1.2.4", true, true, "ipr_a5"},
    {"ipp_A", "10.1.2.2", true, true, "ipr_a5"},
    {"ipp_A", "11.0.0.1", true, false, ""},
    {"ipp_A", "9.255.255.255", true, false, ""},
    {"ipp_A", "10.255.255.255", true, true, "ipr_a1"},
    {"ipp_A", "192.168.1.7", true, false, "ipr_d2"},
    {"ipp_A", "192.168.2.1", true, false, "ipr_d2"},
    {"ipp_A", "2001:db8::1", true, true, "ipr_a3"},
    {"ipp_A", "2001:DB8:ffff::1", true, true, "ipr_a3"},
    {"ipp_A", "2001:db8:dead:beef::1", true, false, "ipr_d3"},
    {"ipp_A", "2001:db8:dead::1", true, false, "ipr_d3"},
    {"ipp_A", "2001:db9::1", true, false, ""},
    {"ipp_A", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", true, false, ""},
    {"ipp_A", "::ffff:10.9.9.9", true, true, "ipr_a1"},
    {"ipp_A", "::FFFF:10.1.2.3", true, false, "ipr_d1"},
    {"ipp_A", "::ffff:a09:909", true, true, "ipr_a1"},
    {"ipp_A", "::10.9.9.9", true, false, ""}, /* IPv4-compatible: plain IPv6 */
    {"ipp_B", "1.2.3.4", true, true, "ipr_b1"},
    {"ipp_B", "0.0.0.0", true, true, "ipr_b1"},
    {"ipp_B", "255.255.255.255", true, true, "ipr_b1"},
    {"ipp_B", "203.0.113.9", true, false, "ipr_b3"},
    {"ipp_B", "203.0.113.8", true, true, "ipr_b1"},
    {"ipp_B", "203.0.113.10", true, true, "ipr_b1"},
    {"ipp_B", "::", true, true, "ipr_b4"},
    {"ipp_B", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true, true, "ipr_b4"},
    {"ipp_B", "::ffff:203.0.113.9", true, false, "ipr_b3"},
    {"ipp_C", "198.51.100.1", true, false, "ipr_c2"},
    {"ipp_C", "198.51.101.1", true, false, ""},
    {"ipp_D", "2001:db8::1", true, false, "ipr_d9"},
    {"ipp_D", "1.2.3.4", true, false, ""},          /* no IPv4 rule */
    {"ipp_D", "::ffff:1.2.3.4", true, false, ""},   /* checked as IPv4 */
    {"ipp_E", "127.0.0.1", true, true, "ipr_e1"},
    {"ipp_E", "127.0.0.2", true, false, ""},
    {"ipp_E", "127.0.0.0", true, false, ""},
    {"ipp_E", "::1", true, true, "ipr_e2"},
    {"ipp_E", "::2", true, false, ""},
    {"ipp_E", "::", true, false, ""},
    {"ipp_E", "::ffff:127.0.0.1", true, true, "ipr_e1"},
    {"ipp_F", "10.9.9.9", true, false, "ipr_f3"},
    {"ipp_F", "10.8.0.1", true, false, "ipr_f2"},
    {"ipp_F", "11.0.0.1", true, true, "ipr_f1"},
    {"ipp_F", "::1", true, false, ""},
    /* unknown policies: nothing is allowed */
    {"ipp_Z", "10.0.0.1", false, false, ""},
    {"ipp_", "10.0.0.1", false, false, ""},
    {"", "10.0.0.1", false, false, ""},
    {"ipp_a", "10.0.0.1", false, false, ""}, /* ids are case-sensitive */
};

static policy_index *table_index(void)
{
    policy_index *ix = NULL;
    error_info err;
    assert_int_equal(policy_index_new(&ix, &err), ERROR_OK);
    for (size_t i = 0; i < sizeof table_rules / sizeof table_rules[0]; i++) {
        const struct trule *r = &table_rules[i];
        assert_int_equal(policy_index_add(ix, r->policy, r->cidr, r->action, r->id,
                                          i % 2 == 0, &err), ERROR_OK);
    }
    assert_int_equal(policy_index_finish(ix, &err), ERROR_OK);
    return ix;
}

static const struct trule *table_rule(const char *id)
{
    for (size_t i = 0; i < sizeof table_rules / sizeof table_rules[0]; i++) {
        if (strcmp(table_rules[i].id, id) == 0)
            return &table_rules[i];
    }
    return NULL;
}

static void decisions_table(void **state)
{
    (void)state;
    policy_index *ix = table_index();
    assert_int_equal(policy_index_rule_count(ix), sizeof table_rules / sizeof table_rules[0]);
    assert_int_equal(policy_index_policy_count(ix), 6);
    for (size_t i = 0; i < sizeof table_cases / sizeof table_cases[0]; i++) {
        const struct tcase *c = &table_cases[i];
        policy_decision d;
        memset(&d, 0x55, sizeof d);
        error_info err;
        error_code rc = policy_check(ix, c->policy, c->ip, &d, &err);
        if (rc != ERROR_OK || d.allowed != c->allowed || d.policy_known != c->known ||
            strcmp(d.rule_id, c->rule) != 0)
            fail_msg("case %zu (%s %s): rc %d allowed %d known %d rule '%s'", i, c->policy,
                     c->ip, rc, d.allowed, d.policy_known, d.rule_id);
        const struct trule *r = table_rule(c->rule);
        if (!r) {
            assert_string_equal(d.cidr, "");
            continue;
        }
        assert_string_equal(d.cidr, r->cidr);
        assert_int_equal(d.action, r->action);
        assert_int_equal(d.synced, (size_t)(r - table_rules) % 2 == 0);
    }
    policy_index_free(ix);
}

struct pcase {
    const char *text;
    int family;       /* 0: refused */
    const char *as;   /* the address it stands for, in the family's plain form */
};

static const struct pcase parse_cases[] = {
    {"10.1.2.3", 4, "10.1.2.3"},
    {"0.0.0.0", 4, "0.0.0.0"},
    {"255.255.255.255", 4, "255.255.255.255"},
    {"::ffff:10.1.2.3", 4, "10.1.2.3"},
    {"::ffff:0a01:0203", 4, "10.1.2.3"},
    {"0:0:0:0:0:ffff:10.1.2.3", 4, "10.1.2.3"},
    {"2001:db8::1", 6, "2001:db8::1"},
    {"2001:0db8:0000:0000:0000:0000:0000:0001", 6, "2001:db8::1"},
    {"::", 6, "::"},
    {"::1", 6, "::1"},
    {"::0012", 6, "::12"},
    {"::ffff:1:2", 4, "0.1.0.2"},
    {"::fffe:1:2", 6, "::fffe:1:2"},
    {"::1:ffff:1:2", 6, "::1:ffff:1:2"},
    {"64:ff9b::10.1.2.3", 6, "64:ff9b::a01:203"},
    {"", 0, NULL},
    {" 10.1.2.3", 0, NULL},
    {"10.1.2.3 ", 0, NULL},
    {"10.1.2.3\n", 0, NULL},
    {"10.1.2.3\t", 0, NULL},
    {"10.1.2.03", 0, NULL},
    {"010.1.2.3", 0, NULL},
    {"10.01.2.3", 0, NULL},
    {"00.1.2.3", 0, NULL},
    {"::ffff:010.1.2.3", 0, NULL},
    {"10.1.2.3/32", 0, NULL},
    {"2001:db8::/32", 0, NULL},
    {"fe80::1%eth0", 0, NULL},
    {"fe80::1%1", 0, NULL},
    {"10.1.2", 0, NULL},
    {"10.1.2.256", 0, NULL},
    {"10.1.2.3.4", 0, NULL},
    {"0x0a.1.2.3", 0, NULL},
    {"10.1.2.3:80", 0, NULL},
    {"[::1]", 0, NULL},
    {"2001:db8:::1", 0, NULL},
    {"2001:db8::1::2", 0, NULL},
    {"12345::", 0, NULL},
    {"gggg::", 0, NULL},
    {"hello", 0, NULL},
    {"10.1.2.3\xc2\xa0", 0, NULL},
    {"1111:2222:3333:4444:5555:6666:7777:8888:9999", 0, NULL},
    {"1111:2222:3333:4444:5555:6666:255.255.255.255.1", 0, NULL},
    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0, NULL},
};

static void addr_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
        const struct pcase *c = &parse_cases[i];
        policy_addr a;
        error_info err;
        error_clear(&err);
        error_code rc = policy_addr_parse(c->text, &a, &err);
        if (!c->family) {
            if (rc != ERROR_INVALID)
                fail_msg("case %zu should be refused", i);
            assert_int_equal(err.code, ERROR_INVALID);
            assert_true(err.msg[0] != '\0');
            /* The message never repeats the input. */
            if (strlen(c->text) >= 3 && strstr(err.msg, c->text))
                fail_msg("case %zu: message quotes the input: %s", i, err.msg);
            continue;
        }
        if (rc != ERROR_OK)
            fail_msg("case %zu (%s) refused: %s", i, c->text, err.msg);
        assert_int_equal(a.family, c->family);
        char buf[INET6_ADDRSTRLEN];
        assert_non_null(inet_ntop(a.family == 4 ? AF_INET : AF_INET6, a.bytes, buf,
                                  sizeof buf));
        assert_string_equal(buf, c->as);
    }
    policy_addr a;
    assert_int_equal(policy_addr_parse(NULL, &a, NULL), ERROR_INVALID);
}

static void bad_address_in_check(void **state)
{
    (void)state;
    policy_index *ix = table_index();
    policy_decision d;
    error_info err;
    assert_int_equal(policy_check(ix, "ipp_A", "10.0.0.1/8", &d, &err), ERROR_INVALID);
    assert_false(d.allowed);
    assert_string_equal(d.rule_id, "");
    assert_null(strstr(err.msg, "10.0.0.1"));
    policy_index_free(ix);
}

static void add_refuses_bad_rules(void **state)
{
    (void)state;
    policy_index *ix = NULL;
    error_info err;
    assert_int_equal(policy_index_new(&ix, &err), ERROR_OK);
    assert_int_equal(policy_index_add(ix, "ipp_A", "10.0.0.1/8", A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "10.0.0.0/8"));
    assert_int_equal(policy_index_add(ix, "ipp_A", "2001:DB8::/32", A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "2001:db8::/32"));
    assert_int_equal(policy_index_add(ix, "ipp_A", "10.0.0.1", A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_int_equal(policy_index_add(ix, "ipp_A", "bogus", A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_int_equal(policy_index_add(ix, "ipp_A", NULL, A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_int_equal(policy_index_add(ix, "", "10.0.0.0/8", A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_int_equal(policy_index_add(ix, "ipp_A", "10.0.0.0/8", A, "", true, &err),
                     ERROR_INVALID);
    char longid[MODEL_ID_MAX + 2];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    assert_int_equal(policy_index_add(ix, longid, "10.0.0.0/8", A, "ipr_1", true, &err),
                     ERROR_INVALID);
    assert_int_equal(policy_index_add(ix, "ipp_A", "10.0.0.0/8", (model_action)7, "ipr_1",
                                      true, &err), ERROR_INVALID);
    assert_int_equal(policy_index_rule_count(ix), 0);
    assert_int_equal(policy_index_policy_count(ix), 0);
    /* Nothing half-added: the index still answers. */
    policy_decision d;
    assert_int_equal(policy_check(ix, "ipp_A", "10.0.0.1", &d, &err), ERROR_OK);
    assert_false(d.allowed);
    assert_false(d.policy_known);
    policy_index_free(ix);
    policy_index_free(NULL);
}

static void empty_and_null_index(void **state)
{
    (void)state;
    policy_index *ix = NULL;
    error_info err;
    assert_int_equal(policy_index_new(&ix, &err), ERROR_OK);
    policy_decision d;
    assert_int_equal(policy_check(ix, "ipp_A", "::1", &d, &err), ERROR_OK);
    assert_false(d.allowed);
    assert_false(d.policy_known);
    assert_int_equal(policy_check(NULL, "ipp_A", "::1", &d, &err), ERROR_OK);
    assert_false(d.allowed);
    assert_int_equal(policy_index_rule_count(NULL), 0);
    policy_index_free(ix);
}

static void duplicate_rule_keeps_first(void **state)
{
    (void)state;
    policy_index *ix = NULL;
    error_info err;
    assert_int_equal(policy_index_new(&ix, &err), ERROR_OK);
    assert_int_equal(policy_index_add(ix, "ipp_A", "10.0.0.0/8", A, "ipr_1", true, &err),
                     ERROR_OK);
    assert_int_equal(policy_index_add(ix, "ipp_A", "10.0.0.0/8", A, "ipr_2", false, &err),
                     ERROR_OK);
    assert_int_equal(policy_index_rule_count(ix), 1);
    policy_decision d;
    assert_int_equal(policy_check(ix, "ipp_A", "10.0.0.1", &d, &err), ERROR_OK);
    assert_true(d.allowed);
    assert_string_equal(d.rule_id, "ipr_1");
    assert_true(d.synced);
    policy_index_free(ix);
}

/* ---- readers on many threads --------------------------------------------- */

typedef struct reader {
    const policy_index *ix;
    size_t mismatches;
} reader;

static void *read_table(void *arg)
{
    reader *r = arg;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof table_cases / sizeof table_cases[0]; i++) {
            const struct tcase *c = &table_cases[i];
            policy_decision d;
            if (policy_check(r->ix, c->policy, c->ip, &d, NULL) != ERROR_OK ||
                d.allowed != c->allowed || strcmp(d.rule_id, c->rule) != 0)
                r->mismatches++;
        }
    }
    return NULL;
}

static void readers_share_an_index(void **state)
{
    (void)state;
    policy_index *ix = table_index();
    enum { THREADS = 4 };
    pthread_t t[THREADS];
    reader r[THREADS];
    for (int i = 0; i < THREADS; i++) {
        r[i] = (reader){.ix = ix};
        assert_int_equal(pthread_create(&t[i], NULL, read_table, &r[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(r[i].mismatches, 0);
    }
    policy_index_free(ix);
}

/* ---- loading from a store ------------------------------------------------ */

static void add_stored(store *st, const char *cidr, model_action action, model_state state,
                       char *id)
{
    ts_insert_rule(st, "ipp_L", cidr, action, state, id);
}

/* A synced rule of ipp_L as an older rampart could have cached it: written into the
 * database file with SQL, past the store's gate. */
static void add_raw(const char *path, const char *id, const char *cidr, model_action action)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO rules (id, cidr, policy_id, action,"
                                            " state) VALUES (?1, ?2, 'ipp_L', ?3, 'synced')",
                                        -1, &s, NULL), SQLITE_OK);
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, cidr, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, model_action_name(action), -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    sqlite3_close(db);
}

static void load_takes_rules_in_force(void **state)
{
    (void)state;
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    char synced[MODEL_ID_MAX + 1], fresh[MODEL_ID_MAX + 1], creating[MODEL_ID_MAX + 1];
    char unknown[MODEL_ID_MAX + 1], failed[MODEL_ID_MAX + 1], deleting[MODEL_ID_MAX + 1];
    char gone[MODEL_ID_MAX + 1];
    add_stored(st, "10.0.0.0/8", A, MODEL_STATE_SYNCED, synced);
    add_stored(st, "10.1.0.0/16", A, MODEL_STATE_NEW, fresh);
    add_stored(st, "2001:db8::/32", A, MODEL_STATE_CREATING, creating);
    add_stored(st, "10.2.0.0/16", D, MODEL_STATE_UNKNOWN, unknown);
    add_stored(st, "10.3.0.0/16", D, MODEL_STATE_FAILED, failed);
    add_stored(st, "10.4.0.0/16", D, MODEL_STATE_DELETING, deleting);
    add_stored(st, "10.5.0.0/16", D, MODEL_STATE_REMOTE_DELETED, gone);
    policy_index *ix = NULL;
    assert_int_equal(policy_index_load(st, &ix, &err), ERROR_OK);
    assert_int_equal(policy_index_rule_count(ix), 4);
    assert_int_equal(policy_index_policy_count(ix), 1);
    struct {
        const char *ip;
        bool allowed;
        const char *rule;
        bool synced;
    } want[] = {
        {"10.0.0.1", true, synced, true},    {"10.1.0.1", true, fresh, false},
        {"2001:db8::5", true, creating, false}, {"10.2.0.1", false, unknown, false},
        {"10.3.0.1", true, synced, true},    {"10.4.0.1", true, synced, true},
        {"10.5.0.1", true, synced, true},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        policy_decision d;
        assert_int_equal(policy_check(ix, "ipp_L", want[i].ip, &d, &err), ERROR_OK);
        assert_int_equal(d.allowed, want[i].allowed);
        assert_string_equal(d.rule_id, want[i].rule);
        assert_int_equal(d.synced, want[i].synced);
    }
    policy_index_free(ix);
    store_close(st);
}

/* The store refuses such rows now, but a cache written by an older version may hold
 * them: the load copes with another form of a valid cidr and refuses, naming the
 * rule, one that is not. */
static void load_canonicalises_or_refuses(void **state)
{
    (void)state;
    ts_store_dir db;
    ts_store_dir_open(&db, "/tmp/rampart-policy-XXXXXX", "cache.db");
    store *st = db.st;
    const char *path = db.path;
    error_info err;
    const char *upper = "ipr_2Upper0Case", *bad = "ipr_2Host0Bits";
    add_raw(path, upper, "2001:DB8:0::/32", A);
    policy_index *ix = NULL;
    assert_int_equal(policy_index_load(st, &ix, &err), ERROR_OK);
    policy_decision d;
    assert_int_equal(policy_check(ix, "ipp_L", "2001:db8::1", &d, &err), ERROR_OK);
    assert_true(d.allowed);
    assert_string_equal(d.rule_id, upper);
    assert_string_equal(d.cidr, "2001:db8::/32");
    policy_index_free(ix);

    add_raw(path, bad, "10.0.0.1/8", D);
    ix = (policy_index *)&err; /* must come back NULL */
    assert_int_equal(policy_index_load(st, &ix, &err), ERROR_INVALID);
    assert_null(ix);
    assert_non_null(strstr(err.msg, bad));
    assert_non_null(strstr(err.msg, "host bits"));
    assert_int_equal(policy_index_load_policy(st, "ipp_other", &ix, &err), ERROR_OK);
    assert_int_equal(policy_index_policy_count(ix), 0);
    policy_index_free(ix);
    assert_int_equal(policy_index_load_policy(st, "", &ix, &err), ERROR_INVALID);
    assert_null(ix);
    ts_store_dir_close(&db);
}

static void load_one_policy(void **state)
{
    (void)state;
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    char id[MODEL_ID_MAX + 1];
    add_stored(st, "10.0.0.0/8", A, MODEL_STATE_NEW, id);
    ts_insert_rule(st, "ipp_M", "10.0.0.0/8", D, MODEL_STATE_NEW, NULL);
    policy_index *ix = NULL;
    assert_int_equal(policy_index_load_policy(st, "ipp_L", &ix, &err), ERROR_OK);
    assert_int_equal(policy_index_rule_count(ix), 1);
    assert_int_equal(policy_index_policy_count(ix), 1);
    policy_decision d;
    assert_int_equal(policy_check(ix, "ipp_L", "10.1.1.1", &d, &err), ERROR_OK);
    assert_true(d.allowed);
    assert_int_equal(policy_check(ix, "ipp_M", "10.1.1.1", &d, &err), ERROR_OK);
    assert_false(d.policy_known); /* not loaded */
    policy_index_free(ix);
    store_close(st);
}

static void load_empty_store(void **state)
{
    (void)state;
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    policy_index *ix = NULL;
    assert_int_equal(policy_index_load(st, &ix, &err), ERROR_OK);
    assert_non_null(ix);
    assert_int_equal(policy_index_rule_count(ix), 0);
    policy_index_free(ix);
    store_close(st);
}

/* policy_check_cached, the one call behind `rampart check` and the console's
 * `:check`: a real cache file, several addresses in one call, each with its
 * decision and the rule that decided; another policy's rules never speak. */
static void check_cached_decides(void **state)
{
    (void)state;
    ts_store_dir db;
    ts_store_dir_open(&db, "/tmp/rampart-policy-XXXXXX", "cache.db");
    char allow4[MODEL_ID_MAX + 1], deny4[MODEL_ID_MAX + 1];
    char allow6[MODEL_ID_MAX + 1], deny6[MODEL_ID_MAX + 1];
    ts_insert_rule(db.st, "ipp_K", "10.0.0.0/8", A, MODEL_STATE_SYNCED, allow4);
    ts_insert_rule(db.st, "ipp_K", "10.1.2.0/24", D, MODEL_STATE_NEW, deny4);
    ts_insert_rule(db.st, "ipp_K", "2001:db8::/32", A, MODEL_STATE_SYNCED, allow6);
    ts_insert_rule(db.st, "ipp_K", "2001:db8:dead::/48", D, MODEL_STATE_SYNCED, deny6);
    ts_insert_rule(db.st, "ipp_O", "0.0.0.0/0", A, MODEL_STATE_SYNCED, NULL);
    struct {
        const char *ip;
        bool allowed;
        const char *rule, *cidr;
        model_action action;
        bool synced;
    } want[] = {
        {"10.9.9.9", true, allow4, "10.0.0.0/8", A, true},           /* allow */
        {"10.1.2.3", false, deny4, "10.1.2.0/24", D, false},         /* deny inside allow */
        {"192.0.2.1", false, "", "", D, false},                      /* no rule */
        {"2001:db8::1", true, allow6, "2001:db8::/32", A, true},     /* IPv6 allow */
        {"2001:db8:dead::5", false, deny6, "2001:db8:dead::/48", D, true}, /* IPv6 deny */
        {"2001:db9::1", false, "", "", D, false},                    /* IPv6, no rule */
    };
    enum { N = sizeof want / sizeof want[0] };
    policy_addr addrs[N];
    error_info err;
    for (size_t i = 0; i < N; i++)
        assert_int_equal(policy_addr_parse(want[i].ip, &addrs[i], &err), ERROR_OK);
    policy_decision d[N];
    bool known = false;
    assert_int_equal(policy_check_cached(db.st, "ipp_K", addrs, N, d, &known, &err), ERROR_OK);
    assert_true(known);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(d[i].allowed, want[i].allowed);
        assert_true(d[i].policy_known);
        assert_string_equal(d[i].rule_id, want[i].rule);
        assert_string_equal(d[i].cidr, want[i].cidr);
        if (want[i].rule[0]) {
            assert_int_equal(d[i].action, want[i].action);
            assert_int_equal(d[i].synced, want[i].synced);
        }
    }

    /* The words `check` prints and the console's sentence, from the same decision. */
    policy_words w;
    policy_decision_words(&d[1], &w);
    assert_string_equal(w.decision, "denied");
    assert_string_equal(w.action, "deny");
    assert_string_equal(w.cidr, "10.1.2.0/24");
    assert_string_equal(w.rule, deny4);
    assert_string_equal(w.sync, "pending");
    policy_decision_words(&d[2], &w);
    assert_string_equal(w.decision, "denied");
    assert_string_equal(w.action, "-");
    assert_string_equal(w.rule, "-");
    char line[256], expect[256];
    policy_decision_sentence("10.1.2.3", "ipp_K", &d[1], known, line, sizeof line);
    snprintf(expect, sizeof expect, "10.1.2.3: denied in ipp_K by deny rule 10.1.2.0/24 %s "
             "(pending)", deny4);
    assert_string_equal(line, expect);
    policy_decision_sentence("192.0.2.1", "ipp_K", &d[2], known, line, sizeof line);
    assert_string_equal(line, "192.0.2.1: denied in ipp_K: no rule of the policy contains it");

    /* A policy with no rules in the cache: nothing allowed, not known. */
    assert_int_equal(policy_check_cached(db.st, "ipp_Z", addrs, 1, d, &known, &err), ERROR_OK);
    assert_false(known);
    assert_false(d[0].allowed);
    assert_string_equal(d[0].rule_id, "");
    policy_decision_sentence("10.9.9.9", "ipp_Z", &d[0], known, line, sizeof line);
    assert_non_null(strstr(line, "no rules in force"));

    /* The load's refusal comes back, nothing decided. */
    assert_int_equal(policy_check_cached(db.st, "", addrs, 1, d, &known, &err), ERROR_INVALID);
    ts_store_dir_close(&db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decisions_table),
        cmocka_unit_test(addr_parse_table),
        cmocka_unit_test(bad_address_in_check),
        cmocka_unit_test(add_refuses_bad_rules),
        cmocka_unit_test(empty_and_null_index),
        cmocka_unit_test(duplicate_rule_keeps_first),
        cmocka_unit_test(readers_share_an_index),
        cmocka_unit_test(load_takes_rules_in_force),
        cmocka_unit_test(load_canonicalises_or_refuses),
        cmocka_unit_test(load_one_policy),
        cmocka_unit_test(load_empty_store),
        cmocka_unit_test(check_cached_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
