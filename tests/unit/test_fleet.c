/* A fleet's parts: the store's change counter and kept pages, the mirror's entity
 * tags and If-None-Match, the client's ETag and Cache-Control readers, the
 * read_only and mirror_max_age settings. (tests/e2e/fleet.sh runs them together
 * with a real nginx.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sync/api_internal.h"
#include "rampart/config.h"
#include "rampart/serve_list.h"
#include "rampart/serve_reply.h"
#include "rampart/store.h"
#include "test_support.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-fleet-XXXXXX", "rampart.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

static long long counter(store *st, model_kind kind)
{
    store_change_tag t;
    error_info err;
    assert_int_equal(store_change_tag_get(st, kind, &t, &err), ERROR_OK);
    assert_true(strlen(t.cache_id) == 16);
    return t.counter;
}

/* ---- the change counter ---- */

static void counter_moves_with_every_write_of_its_kind(void **state)
{
    store *st = ((ts_store_dir *)*state)->st;
    long long r0 = counter(st, MODEL_KIND_RULE), c0 = counter(st, MODEL_KIND_CRED);
    char id[MODEL_ID_MAX + 1];
    ts_insert_rule(st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_SYNCED, id);
    long long r1 = counter(st, MODEL_KIND_RULE);
    assert_true(r1 > r0);
    assert_int_equal(counter(st, MODEL_KIND_CRED), c0); /* the other kind's tags stay */
    error_info err;
    assert_int_equal(store_delete(st, MODEL_KIND_RULE, id, NULL, &err), ERROR_OK);
    assert_true(counter(st, MODEL_KIND_RULE) > r1);
    /* A fact of the cache is not a row: no tag changes. */
    long long r2 = counter(st, MODEL_KIND_RULE);
    assert_int_equal(store_meta_set(st, STORE_META_LAST_SYNC, "2026-01-01T00:00:00Z", &err),
                     ERROR_OK);
    assert_int_equal(counter(st, MODEL_KIND_RULE), r2);
    model_object c;
    ts_cred_init(&c, "web", "", NULL);
    ts_insert(st, &c, NULL);
    assert_true(counter(st, MODEL_KIND_CRED) > c0);
}

/* An import moves the counter (a large one drops the triggers with the indexes
 * and counts once at its finish), and the triggers are there after it. */
static void bulk_import_counts_once_and_keeps_the_triggers(void **state)
{
    store *st = ((ts_store_dir *)*state)->st;
    long long r0 = counter(st, MODEL_KIND_RULE);
    error_info err;
    store_import *imp = NULL;
    assert_int_equal(store_begin(st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(st, MODEL_KIND_RULE, 100, &imp, &err), ERROR_OK);
    for (int i = 0; i < 100; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        model_object o = ts_rule(POLICY, cidr, MODEL_ACTION_ALLOW, MODEL_STATE_NEW);
        assert_int_equal(store_import_add(imp, &o, NULL, &err), ERROR_OK);
        model_object_clear(&o);
    }
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(st, &err), ERROR_OK);
    long long r1 = counter(st, MODEL_KIND_RULE);
    assert_true(r1 > r0);
    ts_insert_rule(st, POLICY, "192.0.2.0/24", MODEL_ACTION_DENY, MODEL_STATE_NEW, NULL);
    assert_true(counter(st, MODEL_KIND_RULE) > r1); /* triggers back */
}

/* ---- a follower's kept pages ---- */

static void kept_pages_get_put_prune(void **state)
{
    store *st = ((ts_store_dir *)*state)->st;
    const char *coll = "https://hub.example/ip_policy_rules";
    const char *p1 = "https://hub.example/ip_policy_rules";
    const char *p2 = "https://hub.example/ip_policy_rules?before_id=ipr_1&limit=100";
    char etag[API_ETAG_MAX];
    char *body = NULL;
    size_t len = 0;
    error_info err;
    assert_int_equal(store_http_page_get(st, p1, etag, sizeof etag, &body, &len, &err),
                     ERROR_NOT_FOUND);
    assert_null(body);
    assert_int_equal(store_http_page_put(st, p1, coll, "\"a-r1-x\"", "{\"p\":1}", 7, 1000, &err),
                     ERROR_OK);
    assert_int_equal(store_http_page_put(st, p2, coll, "W/\"b\"", "{}", 2, 1000, &err),
                     ERROR_OK);
    assert_int_equal(store_http_page_put(st, p1, coll, "\"a-r2-x\"", "{\"p\":2}", 7, 2000, &err),
                     ERROR_OK); /* replaced */
    assert_int_equal(store_http_page_get(st, p1, etag, sizeof etag, &body, &len, &err), ERROR_OK);
    assert_string_equal(etag, "\"a-r2-x\"");
    assert_int_equal(len, 7);
    assert_string_equal(body, "{\"p\":2}");
    free(body);
    /* p2 not used since the listing that began at 1500: gone; p1 stays. */
    assert_int_equal(store_http_page_prune(st, coll, 1500, &err), ERROR_OK);
    assert_int_equal(store_http_page_get(st, p2, etag, sizeof etag, &body, &len, &err),
                     ERROR_NOT_FOUND);
    assert_int_equal(store_http_page_reused(st, p1, 3000, &err), ERROR_OK);
    assert_int_equal(store_http_page_prune(st, coll, 2500, &err), ERROR_OK);
    assert_int_equal(store_http_page_get(st, p1, etag, sizeof etag, &body, &len, &err), ERROR_OK);
    free(body);
    /* No tag, or one too long: refused. */
    assert_int_equal(store_http_page_put(st, p1, coll, "", "{}", 2, 1, &err), ERROR_INVALID);
    char longtag[STORE_ETAG_MAX + 8];
    memset(longtag, 'x', sizeof longtag - 1);
    longtag[sizeof longtag - 1] = '\0';
    assert_int_equal(store_http_page_put(st, p1, coll, longtag, "{}", 2, 1, &err),
                     ERROR_INVALID);
}

/* ---- entity tags and If-None-Match ---- */

static void etags_name_the_state_and_the_request(void **state)
{
    (void)state;
    store_change_tag t = {.counter = 42};
    strcpy(t.cache_id, "0123456789abcdef");
    serve_list_query q = {.limit = 100, .before_id = NULL};
    char a[SERVE_ETAG_MAX], b[SERVE_ETAG_MAX], c[SERVE_ETAG_MAX], d[SERVE_ETAG_MAX];
    serve_list_etag(&t, "http://h", MODEL_KIND_RULE, &q, NULL, a, sizeof a);
    assert_true(strncmp(a, "\"0123456789abcdef-r42-", 22) == 0);
    assert_int_equal(a[strlen(a) - 1], '"');
    serve_list_etag(&t, "http://h", MODEL_KIND_RULE, &q, NULL, b, sizeof b);
    assert_string_equal(a, b); /* the same state and request: the same tag */
    q.before_id = "ipr_1";
    serve_list_etag(&t, "http://h", MODEL_KIND_RULE, &q, NULL, c, sizeof c);
    assert_string_not_equal(a, c);
    q.before_id = NULL;
    serve_list_etag(&t, "https://other", MODEL_KIND_RULE, &q, NULL, c, sizeof c);
    assert_string_not_equal(a, c); /* the uris in the body differ */
    t.counter = 43;
    serve_list_etag(&t, "http://h", MODEL_KIND_RULE, &q, NULL, d, sizeof d);
    assert_string_not_equal(a, d);
    serve_list_etag(&t, "http://h", MODEL_KIND_CRED, NULL, "cr_1", d, sizeof d);
    assert_true(strstr(d, "-c43-") != NULL);
}

static void if_none_match_weak_comparison(void **state)
{
    (void)state;
    const char *tag = "\"abc-r1-0f\"";
    static const struct {
        const char *header;
        bool match;
    } cases[] = {
        {"\"abc-r1-0f\"", true},
        {"W/\"abc-r1-0f\"", true},                  /* weak comparison */
        {"\"x\", \"abc-r1-0f\"", true},             /* a list */
        {"\"x\" ,W/\"abc-r1-0f\" , \"y\"", true},
        {", ,\"abc-r1-0f\"", true},                 /* empty elements */
        {"*", true},
        {" * ", true},
        {"\"abc-r1-0e\"", false},
        {"abc-r1-0f", false},                       /* not quoted */
        {"\"abc-r1-0f", false},
        {"\"abc-r1-0f\" junk", false},
        {"* , \"abc-r1-0f\"", false},               /* "*" stands alone */
        {"\"x\", bad, \"abc-r1-0f\"", false},       /* a malformed list matches nothing */
        {"", false},
        {NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (serve_etag_matches(cases[i].header, tag) != cases[i].match)
            fail_msg("If-None-Match: %s", cases[i].header ? cases[i].header : "(none)");
    }
    assert_true(serve_etag_matches("\"abc-r1-0f\"", "W/\"abc-r1-0f\""));
}

static void cache_headers(void **state)
{
    (void)state;
    http_response r = {0};
    assert_true(serve_cache_headers(&r, "\"t\"", 30));
    assert_string_equal(r.headers[0].name, "ETag");
    assert_string_equal(r.headers[1].value, "public, max-age=30, stale-while-revalidate=30");
    http_response z = {0};
    assert_true(serve_cache_headers(&z, "\"t\"", 0));
    assert_string_equal(z.headers[1].value, "public, no-cache");
}

/* ---- the client's readers ---- */

static void client_takes_well_formed_etags_only(void **state)
{
    (void)state;
    static const struct {
        const char *value, *want;
    } cases[] = {
        {" \"abc\"\r\n", "\"abc\""},
        {"W/\"abc\"", "W/\"abc\""},
        {"\"\"", "\"\""},
        {"abc", ""},
        {"\"a b\"", ""},        /* a space is no etagc */
        {"\"a\"b\"", ""},
        {"\"a\x01\"", ""},
        {"\"abc", ""},
        {"W/abc", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[API_ETAG_MAX];
        api_take_etag(cases[i].value, strlen(cases[i].value), out, sizeof out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("ETag %s: got '%s'", cases[i].value, out);
    }
    char small[4];
    api_take_etag("\"abcdef\"", 8, small, sizeof small);
    assert_string_equal(small, ""); /* does not fit: not taken */
    assert_true(api_cache_control_no_store(" no-store", 9));
    assert_true(api_cache_control_no_store("private, NO-STORE\r\n", 19));
    assert_false(api_cache_control_no_store("public, max-age=30", 18));
    assert_false(api_cache_control_no_store("no-stored", 9));
}

/* ---- settings ---- */

static const char *no_env(void *ctx, const char *name)
{
    (void)ctx, (void)name;
    return NULL;
}

static void read_only_and_max_age_settings(void **state)
{
    (void)state;
    config cfg;
    error_info err;
    assert_int_equal(config_load(&cfg, no_env, NULL, &err), ERROR_OK);
    assert_false(config_flag(&cfg, CONFIG_READ_ONLY));
    assert_int_equal(config_number(&cfg, CONFIG_MIRROR_MAX_AGE), 30);
    static const char *const yes[] = {"true", "YES", "On", "1"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(config_set(&cfg, CONFIG_READ_ONLY, yes[i], CONFIG_SRC_FLAG, &err),
                         ERROR_OK);
        assert_true(config_flag(&cfg, CONFIG_READ_ONLY));
        assert_string_equal(config_get(&cfg, CONFIG_READ_ONLY), "true");
    }
    assert_int_equal(config_set(&cfg, CONFIG_READ_ONLY, "off", CONFIG_SRC_FLAG, &err), ERROR_OK);
    assert_false(config_flag(&cfg, CONFIG_READ_ONLY));
    assert_int_equal(config_set(&cfg, CONFIG_READ_ONLY, "maybe", CONFIG_SRC_FLAG, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "read_only must be true or false"));
    assert_int_equal(config_set(&cfg, CONFIG_MIRROR_MAX_AGE, "0", CONFIG_SRC_FLAG, &err),
                     ERROR_OK);
    assert_int_equal(config_set(&cfg, CONFIG_MIRROR_MAX_AGE, "86401", CONFIG_SRC_FLAG, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "mirror_max_age"));
    assert_string_equal(config_env_name(CONFIG_READ_ONLY), "RAMPART_READ_ONLY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counter_moves_with_every_write_of_its_kind, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bulk_import_counts_once_and_keeps_the_triggers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(kept_pages_get_put_prune, setup, teardown),
        cmocka_unit_test(etags_name_the_state_and_the_request),
        cmocka_unit_test(if_none_match_weak_comparison),
        cmocka_unit_test(cache_headers),
        cmocka_unit_test(client_takes_well_formed_etags_only),
        cmocka_unit_test(read_only_and_max_age_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
